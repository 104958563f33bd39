"""Pure rules of two-party alternating offers: state in, action in, state out."""

from __future__ import annotations

from decimal import Decimal
from functools import partial
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from bargain_ray.core.status import Ended, Status
from bargain_ray.games.base import RuleError
from bargain_ray.games.kit import turns
from bargain_ray.games.kit.replies import check_keys, decimals_of, is_number, json_object, read_named
from bargain_ray.games.kit.turns import exact
from bargain_ray.games.multi_issue.config import MultiIssueConfig, Term

Kind = Literal["OFFER", "ACCEPT", "NONE", "END"]


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


class State(BaseModel):
    model_config = ConfigDict(frozen=True)

    first_speaker: str
    record: tuple[Entry, ...] = ()
    standing: Offer | None = None
    deal: Offer | None = None
    acceptor: str | None = None
    ended: Ended | None = None
    failed_role: str | None = None


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
            raise RuleError("final_reply", offer_id=state.standing.offer_id, action=action.kind)
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
