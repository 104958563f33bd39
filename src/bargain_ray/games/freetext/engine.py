"""Pure rules of free-text negotiation: parties talk, the observer judges each message.

Party A speaks first (or the unit's first speaker), then strict alternation;
after every party message the observer returns a verdict, and the game closes
when a verdict judges agreement or when the turn limit's last message is judged.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict

from bargain_ray.core.errors import FailureKind
from bargain_ray.core.status import Ended, Status
from bargain_ray.games.base import RuleError
from bargain_ray.games.freetext.config import FreeTextConfig
from bargain_ray.games.kit import turns
from bargain_ray.games.kit.replies import check_keys, json_object

AllocationType = Literal["integrative_full", "integrative_partial", "distributive", "lopsided", "none"]
ALLOCATION_TYPES: tuple[str, ...] = AllocationType.__args__
VERDICT_KEYS = ("agreement_reached", "allocation_type", "allocation", "rationale", "confidence")


class Said(BaseModel):
    """One party message; ``turn`` counts party messages only. ``sentences`` and ``words`` measure
    how the party kept the brief's length instruction (never enforced, see ``parse_message``)."""

    model_config = ConfigDict(frozen=True)

    turn: int
    role: str
    text: str
    sentences: int
    words: int


class Verdict(BaseModel):
    """The observer's reading after party message ``turn``."""

    model_config = ConfigDict(frozen=True)

    turn: int
    agreement_reached: bool
    allocation_type: AllocationType
    allocation: str
    rationale: str
    confidence: float


class State(BaseModel):
    model_config = ConfigDict(frozen=True)

    first_speaker: str
    transcript: tuple[Said, ...] = ()
    verdicts: tuple[Verdict, ...] = ()
    ended: Ended | None = None
    failed_role: str | None = None


def start(config: FreeTextConfig, seed: int, first_speaker: str | None) -> State:
    parties = tuple(config.parties)
    return State(first_speaker=turns.opening_role(parties, first_speaker, parties[0], config.name, "party"))


def other(config: FreeTextConfig, role: str) -> str:
    return turns.other(tuple(config.parties), role)


def to_move(config: FreeTextConfig, state: State) -> str | None:
    """The observer after each unjudged message, else the parties in alternation."""
    if state.ended is not None:
        return None
    if len(state.verdicts) < len(state.transcript):
        return config.observer.role
    return turns.alternating(tuple(config.parties), state.first_speaker, len(state.transcript))


_BREAK = re.compile(r"(?<=[.!?…])[\"'”’)\]]*\s+|\s*\n\s*")


def sentences(text: str) -> int:
    """Sentences as a reader counts them: ends at . ! ? … before a space, or at a line break."""
    return sum(1 for part in _BREAK.split(text) if re.search(r"\w", part))


def parse(config: FreeTextConfig, state: State, role: str, reply: str) -> Said | Verdict:
    """The message or verdict in ``reply``, or RuleError naming the first rule it breaks."""
    if role == config.observer.role:
        return parse_verdict(state, reply)
    return parse_message(config, state, role, reply)


def parse_message(config: FreeTextConfig, state: State, role: str, reply: str) -> Said:
    """A party message breaks the format only when it is empty, or over ``max_words`` when that is set.

    "2 to 4 sentences" is the brief's instruction to the party, and seed 004
    measures what the model does with it: no message is rejected for its
    sentence count; the count and the word count are recorded per message.
    ``max_words`` (None by default: off) is a guard against runaway output only.
    """
    text = reply.strip()
    count = sentences(text)
    if count == 0:
        raise RuleError("empty_message")
    words = len(text.split())
    if config.max_words is not None and words > config.max_words:
        raise RuleError("message_too_long", words=words)
    return Said(turn=len(state.transcript) + 1, role=role, text=text, sentences=count, words=words)


def parse_verdict(state: State, reply: str) -> Verdict:
    """A verdict is one JSON object (a lone ```json fence around it is tolerated)."""
    obj = json_object(reply, fence=True)
    check_keys(obj, VERDICT_KEYS)
    agreed, kind, allocation, rationale, confidence = (obj[k] for k in VERDICT_KEYS)
    if not isinstance(agreed, bool):
        raise RuleError("agreement_not_boolean")
    if kind not in ALLOCATION_TYPES:
        raise RuleError("unknown_allocation_type", kind=kind)
    for key, value in (("allocation", allocation), ("rationale", rationale)):
        if not isinstance(value, str) or not value.strip():
            raise RuleError("empty_text", key=key)
    if isinstance(confidence, bool) or not isinstance(confidence, int | float) or not 0 <= confidence <= 1:
        raise RuleError("confidence_out_of_range")
    if agreed and kind == "none":
        raise RuleError("inconsistent_verdict", case="agreed")
    if not agreed and kind != "none":
        raise RuleError("inconsistent_verdict", case="not_agreed")
    return Verdict(
        turn=len(state.transcript), agreement_reached=agreed, allocation_type=kind,
        allocation=allocation.strip(), rationale=rationale.strip(), confidence=float(confidence),
    )


def apply(config: FreeTextConfig, state: State, role: str, action: Said | Verdict) -> State:
    """The state after a legal message or verdict."""
    if isinstance(action, Said):
        return state.model_copy(update={"transcript": (*state.transcript, action)})
    update: dict = {"verdicts": (*state.verdicts, action)}
    if action.agreement_reached:
        update["ended"] = Ended(status=Status.AGREEMENT, reason="observer_agreement")
    elif len(state.transcript) >= config.max_turns:
        update["ended"] = Ended(status=Status.NO_AGREEMENT, reason="turn_limit")
    return state.model_copy(update=update)


def exhausted(config: FreeTextConfig, state: State, role: str) -> State:
    """Repairs ran out: a party broke the protocol; an observer that cannot judge is a technical failure."""
    if role == config.observer.role:
        ended = Ended(status=Status.TECHNICAL_ERROR, reason="observer_failure", failure=FailureKind.UNREADABLE_INSTRUMENT)
        return state.model_copy(update={"ended": ended, "failed_role": role})
    return turns.format_failure(state, role)
