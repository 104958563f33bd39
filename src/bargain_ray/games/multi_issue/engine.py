"""Pure rules of two-party alternating offers: state in, action in, state out."""

from __future__ import annotations

from decimal import Decimal
from functools import partial
from typing import Any

from pydantic import BaseModel, ConfigDict

from bargain_ray.core.status import Ended, Status
from bargain_ray.games.base import GameState, RuleError
from bargain_ray.games.kit import turns
from bargain_ray.games.kit.replies import LIMITS, check_keys, decimals_of, is_number, json_object, read_named
from bargain_ray.games.kit.turns import exact
from bargain_ray.games.multi_issue.config import MultiIssueConfig, Term
from bargain_ray.games.multi_issue.records import Kind, MultiIssueTurn
from bargain_ray.games.provenance import Declared, ours, rule, seed


class Action(BaseModel):
    """A legal move; terms are kept as the exact decimals the model wrote."""

    model_config = ConfigDict(frozen=True)

    kind: Kind
    offer_id: str | None = None
    terms: dict[str, Decimal] | None = None
    message: str = ""


class Offer(BaseModel):
    model_config = ConfigDict(frozen=True)

    offer_id: str
    proposer: str
    terms: dict[str, Decimal]


class Entry(BaseModel):
    """One turn of the public record."""

    model_config = ConfigDict(frozen=True)

    turn: int
    role: str
    action: Action
    offer_id: str | None = None
    final_reply: bool = False


class State(GameState):
    first_speaker: str
    record: tuple[Entry, ...] = ()
    standing: Offer | None = None
    deal: Offer | None = None
    acceptor: str | None = None


def start(config: MultiIssueConfig, seed: int, first_speaker: str | None) -> State:
    roles = tuple(config.roles)
    return State(first_speaker=turns.opening_role(roles, first_speaker, roles[0], config.name))


def other(config: MultiIssueConfig, role: str) -> str:
    return turns.other(tuple(config.roles), role)


def turn_number(state: State) -> int:
    """The number of the turn about to be played (the final reply is max_turns + 1)."""
    return len(state.record) + 1


def in_final_reply(config: MultiIssueConfig, state: State) -> bool:
    return turn_number(state) == config.max_turns + 1


def to_move(config: MultiIssueConfig, state: State) -> str | None:
    if state.ended is not None:
        return None
    return turns.alternating(tuple(config.roles), state.first_speaker, len(state.record))


def check(config: MultiIssueConfig, state: State, role: str, action: Action) -> None:
    """Raise RuleError unless ``role`` may play ``action`` now."""
    final = in_final_reply(config, state)
    if final:
        if action.kind not in ("ACCEPT", "END"):
            raise RuleError("final_reply", offer_id=state.standing and state.standing.offer_id, action=action.kind)
    elif action.kind == "END":
        raise RuleError("unknown_action", case="end")
    if action.kind == "ACCEPT":
        standing = state.standing
        if standing is None:
            raise RuleError("accept_without_offer")
        if action.offer_id == standing.offer_id and standing.proposer == role:
            raise RuleError("accept_own_offer", offer_id=standing.offer_id)
        if action.offer_id != standing.offer_id:
            raise RuleError("accept_stale_offer", standing=standing.offer_id, offer_id=action.offer_id)


def apply(config: MultiIssueConfig, state: State, role: str, action: Action) -> State:
    """The state after a legal action (``check`` has passed)."""
    n = turn_number(state)
    final = in_final_reply(config, state)
    offer_id = None
    standing = state.standing
    if action.kind == "OFFER":
        offer_id = f"O{n}"
        standing = Offer(offer_id=offer_id, proposer=role, terms=action.terms or {})
    elif action.kind == "ACCEPT":
        offer_id = action.offer_id
    entry = Entry(turn=n, role=role, action=action, offer_id=offer_id, final_reply=final)
    update: dict = {"record": (*state.record, entry), "standing": standing}
    if action.kind == "ACCEPT":
        update |= {
            "deal": state.standing,
            "acceptor": role,
            "ended": Ended(status=Status.AGREEMENT, reason="agreement"),
        }
    elif final:
        update["ended"] = Ended(status=Status.NO_AGREEMENT, reason="final_reply_end")
    elif n == config.max_turns and action.kind != "OFFER":
        update["ended"] = Ended(status=Status.NO_AGREEMENT, reason="turn_limit")
    return state.model_copy(update=update)


def exhausted(config: MultiIssueConfig, state: State, role: str) -> State:
    """Repairs ran out: the protocol itself ended the game."""
    return turns.format_failure(state, role)


def in_range(config: MultiIssueConfig, name: str, value: Decimal) -> bool:
    term = next(t for t in config.terms if t.name == name)
    return exact(term.min) <= exact(str(value)) <= exact(term.max)


_KEYS = ("action", "offer_id", "terms", "message")


def parse(config: MultiIssueConfig, state: State, role: str, reply: str) -> Action:
    """The action in a reply, or RuleError naming the first rule it breaks."""
    obj = json_object(reply, exact=True)
    check_keys(obj, _KEYS)
    kind, offer_id, terms, message = (obj[k] for k in _KEYS)
    if kind not in ("OFFER", "ACCEPT", "NONE", "END"):
        raise RuleError("unknown_action", action=kind)
    if not isinstance(message, str):
        raise RuleError("message_type")
    words = len(message.split())
    if words > config.max_message_words:
        raise RuleError("message_too_long", words=words)
    if kind == "OFFER":
        if offer_id is not None:
            raise RuleError("offer_id_on_offer")
        action = Action(kind=kind, terms=_terms(config, terms), message=message)
    else:
        if terms is not None:
            raise RuleError("terms_without_offer", action=kind)
        if kind == "ACCEPT" and not isinstance(offer_id, str):
            raise RuleError("accept_without_id")
        if kind in ("NONE", "END") and offer_id is not None:
            raise RuleError("offer_id_without_accept", action=kind)
        action = Action(kind=kind, offer_id=offer_id, message=message)
    check(config, state, role, action)
    return action


def _terms(config: MultiIssueConfig, terms: object) -> dict[str, Decimal]:
    """An OFFER's terms; rules ``terms_missing``, ``unknown_term``, ``missing_term`` (``read_named``) and
    ``_term``'s."""
    return read_named(terms, {t.name: t for t in config.terms}, partial(_term, config), noun="term",
                      absent="terms_missing")


def _term(config: MultiIssueConfig, term: Term, value: Any) -> Decimal:
    if not is_number(value):
        raise RuleError("term_not_number", term=term.name)
    if decimals_of(value) > config.decimals:
        raise RuleError("too_many_decimals", term=term.name, value=value)
    if not in_range(config, term.name, value):
        raise RuleError("term_out_of_range", term=term.name, value=value, low=term.min, high=term.max)
    return value


def turn_fields(config: MultiIssueConfig, state: State, role: str, action: Action) -> MultiIssueTurn:
    """The turn record's family columns: the action, its offer id, its terms as written, the message."""
    entry = state.record[-1]
    return MultiIssueTurn(
        action=action.kind, offer_id=entry.offer_id,
        terms={k: str(v) for k, v in action.terms.items()} if action.terms else None,
        message=action.message, final_reply=entry.final_reply,
    )


_FORMAT = ('On your turn reply with exactly one JSON object and nothing else: {"action": "OFFER" or "ACCEPT" or '
           '"NONE", "offer_id": null or "<offer ID>", "terms": null or')
_OFFER = ('OFFER: "terms" gives every negotiated term listed above as a number inside its range with at most two '
          'decimal places, and "offer_id" is null.')
_ACCEPT = 'ACCEPT: "offer_id" is the ID of the other side\'s current standing offer and "terms" is null.'
_NONE = 'NONE: no offer and no acceptance this turn; "offer_id" and "terms" are null.'
_FINAL = "the other side gets one final reply that can only ACCEPT that offer or END without a deal"
PROTOCOL: tuple[Declared, ...] = (
    rule("alternation", "the two sides alternate, at most max_turns turns",
         seed("000", "There are at most 12 turns, alternating between the two sides.")),
    rule("opener", "the unit's first speaker opens (the design's assignment), else the first role",
         ours("seed 000's game opens with the Buyer and seed 001's with the seller: who opens is the design's")),
    rule("fresh_request", "each turn is one request: the private brief and one user message with the whole public "
         "record", seed("000", '"role": "user", "content": "Public situation:')),
    rule("offer", "an offer is binding and replaces the standing offer; its id is O<turn>",
         seed("000", "An offer is binding: if the other side accepts it, both sides are committed to exactly those "
              "terms. A new offer replaces any earlier standing offer.")),
    rule("offer_ids", "offers are named O<turn>", seed("001", '"offer_id": "O8"')),
    rule("accept", "an accept of the other side's standing offer makes the deal",
         seed("000", "This creates a binding agreement on exactly that offer. You cannot accept your own offer.")),
    rule("none", "a turn may make no move", seed("000", "NONE: no offer and no acceptance this turn")),
    rule("message_no_effect", "the message never makes, changes or accepts a deal",
         seed("000", 'Words in "message" never make, change or accept a deal; only the action does.')),
    rule("final_reply", "an offer on the last turn gets one final reply: ACCEPT it or END", seed("000", _FINAL)),
    rule("turn_limit", "no accepted offer by the last turn: no deal, each side its no-agreement points",
         seed("000", "Otherwise, if no offer has been accepted by the end of turn 12, there is no deal and each side "
              "gets its no-agreement points.")),
    rule("format_failure", "a reply that breaks a rule is asked again up to max_repairs times, then the game ends as "
         "a format failure", ours("seeds 000 and 001 record repairs_used, not what ends a game: seed 002's rule, "
                                  "applied here, is our choice")),
    rule("not_one_json_object", "a reply is one JSON object", seed("000", _FORMAT)),
    LIMITS,
    rule("unknown_key", "the reply's keys are action, offer_id, terms, message", seed("000", _FORMAT)),
    rule("missing_key", "the reply has every key", seed("000", _FORMAT)),
    rule("unknown_action", "the action is OFFER, ACCEPT or NONE (END only as the final reply)",
         seed("000", '"action": "OFFER" or "ACCEPT" or "NONE"')),
    rule("accept_without_offer", "an ACCEPT needs a standing offer", seed("000", _ACCEPT)),
    rule("accept_own_offer", "a side cannot accept its own offer", seed("000", "You cannot accept your own offer.")),
    rule("accept_stale_offer", "an ACCEPT names the current standing offer", seed("000", _ACCEPT)),
    rule("message_type", "the message is a string",
         ours("seed 000 shows the message as text; refusing another type is ours")),
    rule("message_too_long", "a message has at most max_message_words words",
         seed("000", '"message" is at most 80 words')),
    rule("offer_id_on_offer", "an OFFER has a null offer_id", seed("000", _OFFER)),
    rule("terms_without_offer", "only an OFFER has terms", seed("000", _NONE)),
    rule("accept_without_id", "an ACCEPT names its offer id", seed("000", _ACCEPT)),
    rule("offer_id_without_accept", "only an ACCEPT has an offer id", seed("000", _NONE)),
    rule("terms_missing", "an OFFER gives its terms", seed("000", _OFFER)),
    rule("unknown_term", "an OFFER names only the negotiated terms", seed("000", _OFFER)),
    rule("missing_term", "an OFFER gives every negotiated term", seed("000", _OFFER)),
    rule("term_not_number", "each term is a number", seed("000", _OFFER)),
    rule("too_many_decimals", "each term has at most decimals decimal places", seed("000", _OFFER)),
    rule("term_out_of_range", "each term lies in its range", seed("000", _OFFER)),
)
"""Every rule of the protocol and every rule code the engine raises, with its source."""
