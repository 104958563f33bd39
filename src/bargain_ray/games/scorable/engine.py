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

from typing import Any, get_args

from pydantic import BaseModel, ConfigDict

from bargain_ray.core.status import Ended, Status
from bargain_ray.games.base import GameState, RuleError
from bargain_ray.games.kit import turns
from bargain_ray.games.kit.replies import LIMITS, check_unknown_keys, json_object, read_named
from bargain_ray.games.provenance import Declared, mixed, ours, rule, seed
from bargain_ray.games.scorable.config import Issue, ScorableConfig
from bargain_ray.games.scorable.records import Kind, ScorableTurn

KINDS: tuple[Kind, ...] = get_args(Kind)
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


class State(GameState):
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
    message = obj.get("message") or ""  # recorded as said: the prompts deliver it only on an open channel
    action = Action(kind=kind, deal=deal, offer_id=offer_id if kind in ("accept", "reject") else None,
                    message=message, scratchpad=obj.get("scratchpad") or "")
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


def turn_fields(config: ScorableConfig, state: State, role: str, action: Action) -> ScorableTurn:
    """The turn record's family columns: the move, its round and offer id, the message and the private scratchpad."""
    entry = state.record[-1]
    return ScorableTurn(action=action.kind, round=entry.round, offer_id=entry.offer_id, deal=action.deal,
                        message=action.message, scratchpad=action.scratchpad, closed_deal=state.deal is not None)


_FENCED = "reply with EXACTLY ONE fenced JSON object and nothing outside it"
_ACTION = '"action" (required): a string naming exactly one formal move this turn.'
_PROPOSE = '"propose" + "deal": {every issue -> one option} — tables a complete package'
_LIVE = "formally accept a specific live offer by its id"
_CHECK = "seed 003 lists the fields, not how a malformed one is answered: refusing it is ours"
PROTOCOL: tuple[Declared, ...] = (
    rule("rotation", "parties move in the fixed order of the config", seed("003", "turns are taken in a fixed rotation")),
    rule("opener_rotates", "each round opens at the seat after the last round's opener",
         seed("003", "the party who tables the opening proposal rotates from round to round")),
    rule("opener_past_walk", "a round opens at the first party still at the table after the last round's opener",
         ours("seed 003 says the opener rotates; how it rotates past a party who walked is our reading")),
    rule("first_opener", "round 1 opens at the unit's first speaker, else at seat (seed mod parties)",
         ours("seed 003 does not say who opens round 1: the unit's first speaker, else seat seed mod parties, is ours")),
    rule("rounds", "rounds of turns in total", seed("003", "There are 4 rounds of turns in total.")),
    rule("deal_closes", "a deal closes when every party still at the table supports the same live offer",
         seed("003", "A deal closes only when every party still at the table has formally ACCEPTed the SAME standing "
              "offer.")),
    rule("proposer_supports", "tabling an offer counts as the proposer's support",
         seed("003", "the mediator gives it an offer id (P1, P2, ...) and records you as supporting it")),
    rule("earliest_offer", "should one move complete two offers, the earliest closes",
         ours("seed 003 does not say which offer closes when a walk completes two: the earliest is ours")),
    rule("offer_ids", "offers are numbered P1, P2, ... in the order tabled",
         seed("003", "the mediator gives it an offer id (P1, P2, ...)")),
    rule("offers_stay_live", "an offer stays live for the whole game",
         mixed(seed("003", _LIVE), ours("seed 003 does not say when an offer stops being live: never, is ours"))),
    rule("reject_withdraws", "a reject withdraws the party's support from the offer",
         mixed(seed("003", '"reject" + "offer_id": "<id>" — formally reject a specific live offer.'),
               ours("what a reject does to a party's earlier support is our reading"))),
    rule("walk", "a party may walk: it leaves for good and takes its no-deal outcome",
         seed("003", "A party may WALK to leave for good and take its no-deal outcome.")),
    rule("veto", "no deal passes without every veto party", seed("003", "no deal can pass unless every veto party accepts")),
    rule("veto_walk_ends", "a veto party's walk ends the game without a deal",
         ours("seed 003 gives the veto, not what a veto party's walk does: ending the game there is our reading")),
    rule("too_few_at_table", "fewer than two parties at the table end the game without a deal",
         ours("seed 003 does not say when too few parties remain: fewer than two, is ours")),
    rule("no_deal_outcome", "without a deal (and for a walker) a party's payoff is its threshold",
         mixed(seed("003", "A deal scoring below this is worse for you than no deal at all."),
               ours("scoring the no-deal outcome as the threshold is our reading"))),
    rule("accept_without_id", "an accept with no offer id is a turn with no formal move",
         seed("003", "Accepts MUST name a live offer id; \"I accept\" with no id does nothing.")),
    rule("action_default", "a reply without an action makes no formal move",
         seed("003", "Omitting the action entirely means the same.")),
    rule("scratchpad_private", "the scratchpad is never shown to any party, not even back to its writer",
         mixed(seed("003", '"scratchpad" (optional): private notes to yourself. NEVER shown to any other party.'),
               ours("seed 003 keeps it from every other party; not showing it back to its writer in later turns "
                    "is ours"))),
    rule("message_public", "the message is shown to every party",
         seed("003", '"message" (optional): a short statement spoken aloud to every party')),
    rule("format_failure", "a reply that breaks a rule is asked again up to max_repairs times, then the game ends as "
         "a format failure", ours("seed 003 does not say what ends a game on broken replies: seed 002's rule, applied "
                                  "here, is ours")),
    rule("not_one_json_object", "a reply is one JSON object, fenced or bare",
         mixed(seed("003", _FENCED), ours("a bare object is accepted too: constrained decoders emit those"))),
    LIMITS,
    rule("unknown_key", "the reply's keys are scratchpad, message, action, deal, offer_id",
         mixed(seed("003", _ACTION), ours("refusing any other key is ours"))),
    rule("missing_key", "(the kit's rule, not raised here: every key but action is optional)",
         ours("the shared rule table holds it; this family never raises it")),
    rule("not_a_string", "scratchpad and message are strings", ours(_CHECK)),
    rule("unknown_action", "the action is propose, accept, reject, walk or none",
         mixed(*(seed("003", q) for q in (_ACTION, '"propose" + "deal"', '"accept" + "offer_id"',
                                          '"reject" + "offer_id"', '"walk" — leave the table permanently',
                                          '"none" — make no formal move this turn')))),
    rule("deal_without_propose", "only a propose has a deal", mixed(seed("003", _PROPOSE), ours(_CHECK))),
    rule("offer_id_without_vote", "only an accept or a reject has an offer id",
         mixed(seed("003", '"accept" + "offer_id": "<id>"'), ours(_CHECK))),
    rule("missing_offer_id", "a reject (and an accept with an id that is not a string) names a live offer id",
         mixed(seed("003", "Accepts MUST name a live offer id"),
               ours("seed 003 says this of accepts; the same for a reject is ours"))),
    rule("unknown_offer", "an accept or a reject names a live offer", seed("003", _LIVE)),
    rule("duplicate_offer", "a package already live cannot be tabled again",
         ours("seed 003 does not say: refusing a second copy of a live package (accept it instead) is ours")),
    rule("missing_deal", "a propose gives a deal", seed("003", _PROPOSE)),
    rule("unknown_issue", "a deal names only the issues", seed("003", _PROPOSE)),
    rule("missing_issue", "a deal chooses an option on every issue", seed("003", _PROPOSE)),
    rule("unknown_option", "each chosen option is one of its issue's",
         seed("003", "Exactly one option must be chosen for every issue")),
)
"""Every rule of the protocol and every rule code the engine raises, with its source."""
