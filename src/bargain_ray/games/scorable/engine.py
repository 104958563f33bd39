"""Pure rules of the multi-party scorable negotiation: state in, action in, state out.

Rotation: the parties move in their fixed order; round r starts at the seat
after round r-1's opener (round 1's opener is the unit's first speaker, else
seat ``seed mod parties``), skipping parties who walked. Offers P1, P2, ... stay
live for the whole game; a party supports an offer by tabling or accepting it
and withdraws by rejecting it. A deal closes as soon as every party still at
the table supports one live offer (the earliest, should a walk complete two).
No deal can pass once a veto party walks or fewer than two parties remain, so
the game ends there; after the last round it ends without a deal.
"""

from __future__ import annotations

import json
from typing import Literal

from pydantic import BaseModel, ConfigDict

from bargain_ray.core.status import Ended, Status
from bargain_ray.games.base import RuleError
from bargain_ray.games.kit.replies import json_object
from bargain_ray.games.scorable.config import ScorableConfig

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
    if first_speaker is not None and first_speaker not in roles:
        raise ValueError(f"first speaker {first_speaker!r} is not a party of {config.name}")
    return _settle(config, State(opener=roles.index(first_speaker) if first_speaker else seed % len(roles)))


def rotation(config: ScorableConfig, state: State, round_: int | None = None) -> list[str]:
    """Every seat of a round, opener first: the opener moves one seat on each round."""
    roles = config.roles
    first = (state.opener + (round_ or state.round) - 1) % len(roles)
    return list(roles[first:] + roles[:first])


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
    round_, pos = state.round, state.pos
    while True:
        if pos >= len(config.roles):
            round_, pos = round_ + 1, 0
        if round_ > config.rounds:
            return state.model_copy(
                update={"round": config.rounds, "pos": 0,
                        "ended": Ended(status=Status.NO_AGREEMENT, reason="rounds_exhausted")}
            )
        if rotation(config, state, round_)[pos] not in state.walked:
            return state.model_copy(update={"round": round_, "pos": pos})
        pos += 1


def live(state: State, offer_id: str) -> Offer | None:
    return next((o for o in state.offers if o.offer_id == offer_id), None)


def check(config: ScorableConfig, state: State, role: str, action: Action) -> None:
    """Raise RuleError unless ``role`` may play ``action`` now."""
    if action.kind in ("accept", "reject"):
        if live(state, action.offer_id or "") is None:
            if not state.offers:
                raise RuleError("unknown_offer", "There is no live offer yet: nothing can be accepted or rejected.")
            ids = ", ".join(o.offer_id for o in state.offers)
            raise RuleError("unknown_offer", f'"{action.offer_id}" is not a live offer; the live offers are {ids}.')
    if action.kind == "propose":
        same = next((o for o in state.offers if o.deal == action.deal), None)
        if same is not None:
            raise RuleError(
                "duplicate_offer",
                f"That package is already live as {same.offer_id}: accept {same.offer_id} instead of tabling it again.",
            )


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
    return state.model_copy(
        update={"ended": Ended(status=Status.FORMAT_FAILURE, reason="format_failure"), "failed_role": role}
    )


_ONE_FENCED = "Your reply must be EXACTLY ONE fenced JSON object (```json ... ```) and nothing outside it."


def parse(config: ScorableConfig, state: State, role: str, reply: str) -> Action:
    """The action in a reply, or RuleError naming the first rule it breaks."""
    obj = json_object(reply, fence=True, error=_ONE_FENCED)  # a bare object too: constrained decoders emit those
    unknown = [k for k in obj if k not in KEYS]
    if unknown:
        keys = ", ".join(f'"{k}"' for k in KEYS)
        raise RuleError("unknown_key", f'Unknown key "{unknown[0]}": the keys are {keys}.')
    for key in ("scratchpad", "message"):
        if obj.get(key) is not None and not isinstance(obj[key], str):
            raise RuleError("not_a_string", f'"{key}" must be a string.')
    kind = obj.get("action")
    kind = "none" if kind is None else kind
    if kind not in KINDS:
        names = ", ".join(f'"{k}"' for k in KINDS)
        raise RuleError("unknown_action", f'Unknown action {json.dumps(kind)}: "action" must be one of {names}.')
    if "deal" in obj and kind != "propose":
        raise RuleError("deal_without_propose", f'"deal" goes only with "propose"; leave it out for "{kind}".')
    if "offer_id" in obj and kind not in ("accept", "reject"):
        raise RuleError(
            "offer_id_without_vote", f'"offer_id" goes only with "accept" or "reject"; leave it out for "{kind}".'
        )
    deal = _deal(config, obj.get("deal")) if kind == "propose" else None
    offer_id = obj.get("offer_id")
    if kind in ("accept", "reject") and not isinstance(offer_id, str):
        raise RuleError(
            "missing_offer_id", f'"{kind}" MUST name a live offer id: give "offer_id", for example "P1".'
        )
    action = Action(kind=kind, deal=deal, offer_id=offer_id if kind in ("accept", "reject") else None,
                    message=obj.get("message") or "", scratchpad=obj.get("scratchpad") or "")
    check(config, state, role, action)
    return action


def _deal(config: ScorableConfig, deal: object) -> dict[str, str]:
    names = [i.name for i in config.issues]
    if not isinstance(deal, dict):
        raise RuleError(
            "missing_deal", f'"propose" needs "deal": an object choosing one option for every issue ({", ".join(names)}).'
        )
    for key in deal:
        if key not in names:
            raise RuleError("unknown_issue", f'Unknown issue "{key}": the issues are {", ".join(names)}.')
    out = {}
    for issue in config.issues:
        if issue.name not in deal:
            raise RuleError("missing_issue", f'The deal must choose an option for every issue; "{issue.name}" is missing.')
        option = deal[issue.name]
        if option not in issue.options:
            raise RuleError(
                "unknown_option",
                f"Unknown option {json.dumps(option)} for {issue.name}: the options are {', '.join(issue.options)}.",
            )
        out[issue.name] = option
    return out
