"""Pure rules of the multi-party scorable negotiation: state in, action in, state out.

Rotation: the parties move in their fixed order; round r opens at the first
party still at the table after round r-1's opener (round 1's opener is the
unit's first speaker, else seat ``seed mod parties``), so no party opens two
rounds in a row while others remain, walks included. Offers P1, P2, ... stay
live for the whole game; a party supports an offer by tabling or accepting it
and withdraws by rejecting it. A deal closes as soon as every party still at
the table supports one live offer (the earliest, should a walk complete two).
No deal can pass once a veto party walks or fewer than two parties remain, so
the game ends there; after the last round it ends without a deal.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from bargain_ray.core.status import Ended, Status
from bargain_ray.games.base import RuleError
from bargain_ray.games.kit import turns
from bargain_ray.games.kit.replies import check_unknown_keys, json_object, read_named
from bargain_ray.games.scorable.config import Issue, ScorableConfig

Kind = Literal["propose", "accept", "reject", "walk", "none"]
KINDS: tuple[Kind, ...] = ("propose", "accept", "reject", "walk", "none")
KEYS = ("scratchpad", "message", "action", "deal", "offer_id")


class Action(BaseModel):
    """A legal move. The scratchpad is kept for the record and never rendered into any prompt."""

    model_config = ConfigDict(frozen=True)

    kind: Kind
    deal: dict[str, str] | None = None
    offer_id: str | None = None
    message: str = ""
    scratchpad: str = ""


class Offer(BaseModel):
    model_config = ConfigDict(frozen=True)

    offer_id: str
    proposer: str
    deal: dict[str, str]
    round: int
    supporters: tuple[str, ...]
    rejecters: tuple[str, ...] = ()


class Entry(BaseModel):
    """One turn of the record; prompts show its public part only."""

    model_config = ConfigDict(frozen=True)

    turn: int
    round: int
    role: str
    action: Action
    offer_id: str | None = None


class State(BaseModel):
    model_config = ConfigDict(frozen=True)

    opener: int
    """Seat of round 1's opener."""
    round_opener: int
    """Seat of this round's opener."""
    round: int = 1
    pos: int = 0
    record: tuple[Entry, ...] = ()
    offers: tuple[Offer, ...] = ()
    walked: tuple[str, ...] = ()
    deal: Offer | None = None
    ended: Ended | None = None
    failed_role: str | None = None


def start(config: ScorableConfig, seed: int, first_speaker: str | None) -> State:
    roles = config.roles
    seat = roles.index(turns.opening_role(roles, first_speaker, roles[seed % len(roles)], config.name, "party"))
    return _settle(config, State(opener=seat, round_opener=seat))


def rotation(config: ScorableConfig, state: State) -> list[str]:
    """Every seat of this round, its opener first."""
    roles = config.roles
    first = state.round_opener
    return list(roles[first:] + roles[:first])


def _next_opener(config: ScorableConfig, state: State) -> int:
    """The first seat after this round's opener whose party is still at the table."""
    n = len(config.roles)
    seats = ((state.round_opener + k) % n for k in range(1, n + 1))
    return next(s for s in seats if config.roles[s] not in state.walked)


def order(config: ScorableConfig, state: State) -> list[str]:
    """The parties who move in this round, opener first, without parties who walked."""
    return [r for r in rotation(config, state) if r not in state.walked]


def at_table(config: ScorableConfig, state: State) -> list[str]:
    return [r for r in config.roles if r not in state.walked]


def to_move(config: ScorableConfig, state: State) -> str | None:
    if state.ended is not None:
        return None
    return rotation(config, state)[state.pos]


def _settle(config: ScorableConfig, state: State) -> State:
    """Move the pointer to the next party at the table, ending the game after the last round."""
    while True:
        if state.pos >= len(config.roles):
            if state.round == config.rounds:
                return state.model_copy(
                    update={"pos": 0, "ended": Ended(status=Status.NO_AGREEMENT, reason="rounds_exhausted")}
                )
            state = state.model_copy(
                update={"round": state.round + 1, "pos": 0, "round_opener": _next_opener(config, state)}
            )
        if rotation(config, state)[state.pos] not in state.walked:
            return state
        state = state.model_copy(update={"pos": state.pos + 1})


def live(state: State, offer_id: str) -> Offer | None:
    return next((o for o in state.offers if o.offer_id == offer_id), None)


def check(config: ScorableConfig, state: State, role: str, action: Action) -> None:
    """Raise RuleError unless ``role`` may play ``action`` now."""
    if action.kind in ("accept", "reject"):
        if live(state, action.offer_id or "") is None:
            if not state.offers:
                raise RuleError("unknown_offer", case="none_live")
            raise RuleError("unknown_offer", offer_id=action.offer_id, live=tuple(o.offer_id for o in state.offers))
    if action.kind == "propose":
        same = next((o for o in state.offers if o.deal == action.deal), None)
        if same is not None:
            raise RuleError("duplicate_offer", offer_id=same.offer_id)


def apply(config: ScorableConfig, state: State, role: str, action: Action) -> State:
    """The state after a legal action (``check`` has passed)."""
    offers = list(state.offers)
    offer_id = action.offer_id
    walked = state.walked
    if action.kind == "propose":
        offer_id = f"P{len(offers) + 1}"
        offers.append(Offer(offer_id=offer_id, proposer=role, deal=action.deal or {}, round=state.round,
                            supporters=(role,)))
    elif action.kind in ("accept", "reject"):
        i = next(k for k, o in enumerate(offers) if o.offer_id == offer_id)
        o = offers[i]
        keep_s = [r for r in o.supporters if r != role]
        keep_r = [r for r in o.rejecters if r != role]
        if action.kind == "accept":
            offers[i] = o.model_copy(update={"supporters": (*keep_s, role), "rejecters": tuple(keep_r)})
        else:
            offers[i] = o.model_copy(update={"supporters": tuple(keep_s), "rejecters": (*keep_r, role)})
    elif action.kind == "walk":
        walked = (*walked, role)
    entry = Entry(turn=len(state.record) + 1, round=state.round, role=role, action=action, offer_id=offer_id)
    state = state.model_copy(update={"record": (*state.record, entry), "offers": tuple(offers), "walked": walked})
    ended = _closing(config, state)
    if ended is not None:
        return ended
    return _settle(config, state.model_copy(update={"pos": state.pos + 1}))


def _closing(config: ScorableConfig, state: State) -> State | None:
    """The ended state if this move closed a deal or made one impossible."""
    table = set(at_table(config, state))
    if any(v in state.walked for v in config.veto):
        return state.model_copy(update={"ended": Ended(status=Status.NO_AGREEMENT, reason="veto_party_walked")})
    if len(table) < 2:
        return state.model_copy(update={"ended": Ended(status=Status.NO_AGREEMENT, reason="too_few_at_table")})
    for o in state.offers:
        if table <= set(o.supporters):
            return state.model_copy(update={"deal": o, "ended": Ended(status=Status.AGREEMENT, reason="deal")})
    return None


def exhausted(config: ScorableConfig, state: State, role: str) -> State:
    """Repairs ran out: the protocol itself ended the game."""
    return turns.format_failure(state, role)


def parse(config: ScorableConfig, state: State, role: str, reply: str) -> Action:
    """The action in a reply, or RuleError naming the first rule it breaks.

    An accept without an offer id (absent or null) is a turn with no formal move, as seed 003 says
    ('"I accept" with no id does nothing'); an id that is not a string, or a reject without one,
    is still a broken rule (the seed is silent there; we keep the rule).
    """
    obj = json_object(reply, fence=True)  # a bare object too: constrained decoders emit those
    check_unknown_keys(obj, KEYS)
    for key in ("scratchpad", "message"):
        if obj.get(key) is not None and not isinstance(obj[key], str):
            raise RuleError("not_a_string", key=key)
    kind = obj.get("action")
    kind = "none" if kind is None else kind
    if kind not in KINDS:
        raise RuleError("unknown_action", action=kind)
    if "deal" in obj and kind != "propose":
        raise RuleError("deal_without_propose", action=kind)
    if "offer_id" in obj and kind not in ("accept", "reject"):
        raise RuleError("offer_id_without_vote", action=kind)
    deal = _deal(config, obj.get("deal")) if kind == "propose" else None
    offer_id = obj.get("offer_id")
    if kind == "accept" and offer_id is None:
        kind = "none"  # "I accept" with no id does nothing
    elif kind in ("accept", "reject") and not isinstance(offer_id, str):
        raise RuleError("missing_offer_id", action=kind)
    action = Action(kind=kind, deal=deal, offer_id=offer_id if kind in ("accept", "reject") else None,
                    message=obj.get("message") or "", scratchpad=obj.get("scratchpad") or "")
    check(config, state, role, action)
    return action


def _deal(config: ScorableConfig, deal: object) -> dict[str, str]:
    """A proposal's deal; rules ``missing_deal``, ``unknown_issue``, ``missing_issue`` (``read_named``) and
    ``unknown_option``."""
    return read_named(deal, {i.name: i for i in config.issues}, _option, noun="issue", absent="missing_deal")


def _option(issue: Issue, option: Any) -> str:
    if option not in issue.options:
        raise RuleError("unknown_option", option=option, issue=issue.name, options=issue.options)
    return option
