"""Pure rules of free-text negotiation: parties talk, the observer judges each message.

Party A speaks first (or the unit's first speaker), then strict alternation;
after every party message the observer returns a verdict, and the game closes
when a verdict judges agreement or when the turn limit's last message is judged.
"""

from __future__ import annotations

import re
from typing import get_args

from pydantic import BaseModel, ConfigDict

from bargain_ray.core.errors import FailureKind
from bargain_ray.core.status import Ended, Status
from bargain_ray.games.base import GameState, RuleError
from bargain_ray.games.freetext.config import FreeTextConfig
from bargain_ray.games.freetext.records import AllocationType, FreeTextTurn, MessageTurn, VerdictTurn
from bargain_ray.games.kit import turns
from bargain_ray.games.kit.replies import LIMITS, check_keys, json_object
from bargain_ray.games.provenance import Declared, mixed, ours, rule, seed

ALLOCATION_TYPES: tuple[str, ...] = get_args(AllocationType)
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


class State(GameState):
    first_speaker: str
    transcript: tuple[Said, ...] = ()
    verdicts: tuple[Verdict, ...] = ()


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
        return parse_verdict(config, state, reply)
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


def parse_verdict(config: FreeTextConfig, state: State, reply: str) -> Verdict:
    """A verdict is one JSON object (a lone ```json fence around it is tolerated). The checks of its confidence's
    range and of its two fields' agreement are settings (ours: seed 004 gives neither)."""
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
    number = not isinstance(confidence, bool) and isinstance(confidence, int | float)
    if not number or (config.verdict_confidence_in_range and not 0 <= confidence <= 1):
        raise RuleError("confidence_out_of_range")  # its sentence asks for a number only when the range is off
    if config.verdict_consistent and agreed and kind == "none":
        raise RuleError("inconsistent_verdict", case="agreed")
    if config.verdict_consistent and not agreed and kind != "none":
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


def turn_fields(config: FreeTextConfig, state: State, role: str, action: Said | Verdict) -> FreeTextTurn:
    """The turn record's family columns: a party's message with its measured length, or the observer's verdict."""
    if isinstance(action, Said):
        return MessageTurn(action="MESSAGE", party_turn=action.turn, message=action.text,
                           sentences=action.sentences, words=action.words)
    return VerdictTurn(action="VERDICT", party_turn=action.turn, **action.model_dump(exclude={"turn"}))


_VERDICT_FORMAT = ours("seed 004 names the verdict's fields, not its format: one JSON object with those keys is ours")
PROTOCOL: tuple[Declared, ...] = (
    rule("alternation", "the two parties talk in strict alternation, one message a turn",
         seed("004", "They talk in strict alternation until they agree or run out of turns.")),
    rule("first_speaker", "Party A speaks first (or the unit's first speaker)",
         seed("004", "Party A, then strict alternation")),
    rule("observer_judges", "after every party message the observer classifies the transcript so far",
         seed("004", "A third LLM observes every message in silence and classifies the outcome against a fixed "
              "taxonomy.")),
    rule("observer_closes", "a verdict of agreement closes the game",
         seed("004", "A negotiation is closed when that observer judges the parties to have reached agreement.")),
    rule("observer_silent", "the parties never see the observer's output",
         seed("004", "you never address the parties and they never see your output")),
    rule("turn_limit", "after max_turns party messages the last verdict ends the game",
         mixed(seed("004", "until they agree or run out of turns"),
               ours("seed 004 gives no number of turns: max_turns (12) and ending on the last verdict are ours"))),
    rule("sentences_measured", "the brief's 2 to 4 sentences are measured per message, never enforced",
         mixed(seed("004", "Reply with one short message per turn: 2 to 4 sentences, plain conversational text."),
               ours("measuring the instruction rather than enforcing it is ours"))),
    rule("observer_failure", "an observer that cannot be read after its repairs leaves the game unknown (a "
         "technical failure, re-run on resume)",
         mixed(seed("000", "The outcome is unknown and is not scored."),
               ours("seed 004 says nothing of an unreadable observer: treating it as seed 000's technical failure "
                    "is our reading"))),
    rule("observer_resume", "on resume the parties' paid replies are replayed and only the observer is asked again",
         ours("the observer's failed call is the one the failure made unknown: asking only it again is ours")),
    rule("format_failure", "a party message that breaks a rule is asked again up to max_repairs times, then the "
         "game ends as a format failure", ours("seed 004 gives no such rule: seed 002's, applied to parties, is ours")),
    rule("empty_message", "a party message has at least one sentence", ours("seed 004 does not say: refusing an "
                                                                            "empty message is ours")),
    rule("message_too_long", "a party message has at most max_words words (when set)",
         ours("a guard against runaway output, off by default: seed 004 gives no word limit")),
    rule("not_one_json_object", "a verdict is one JSON object (one fence tolerated)", _VERDICT_FORMAT),
    LIMITS,
    rule("unknown_key", "the verdict's keys are agreement_reached, allocation_type, allocation, rationale, "
         "confidence", _VERDICT_FORMAT),
    rule("missing_key", "the verdict has every key", _VERDICT_FORMAT),
    rule("agreement_not_boolean", "agreement_reached is true or false",
         mixed(seed("004", "Set agreement_reached to true when the parties have evidently settled on an arrangement"),
               ours("refusing another value is ours"))),
    rule("unknown_allocation_type", "allocation_type is one of the taxonomy's five",
         mixed(seed("004", "classifies the outcome against a fixed taxonomy"), ours("refusing another value is ours"))),
    rule("empty_text", "allocation and rationale are non-empty strings",
         mixed(seed("004", "allocation: one plain sentence describing who ends up with what."),
               ours("refusing an empty one is ours"))),
    rule("confidence_out_of_range", "confidence is a number, from 0 to 1 when verdict_confidence_in_range is set",
         mixed(seed("004", "confidence: your confidence in this reading, between 0 and 1."),
               ours("refusing a number outside it and asking the observer again is ours"))),
    rule("inconsistent_verdict", "agreement_reached true goes with a division type, false with none (when "
         "verdict_consistent is set)",
         mixed(seed("004", "none: no agreement has been reached yet."),
               ours("refusing a verdict whose two fields disagree and asking again is our reading"))),
)
"""Every rule of the protocol and every rule code the engine raises, with its source."""
