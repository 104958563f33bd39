"""The wording of free-text negotiation: the briefs, the observer's instructions, rule sentences, repairs.

The orange renders seed 004's texts byte for byte; another scenario fills the
same frame with its own object, situations and parts. Ours, not the seed's:
the opening line, the observer's transcript request, the rule sentences and
the repair messages. A party sees only its own brief and the conversation; the
observer sees only its instructions and the transcript. No prompt ever names a model.
"""

from __future__ import annotations

import json
from typing import Any

from bargain_ray.core.form import Field, Move, ReplyForm
from bargain_ray.core.prompt import Message, Prompt
from bargain_ray.games.base import RuleError
from bargain_ray.games.freetext import engine
from bargain_ray.games.freetext.config import FreeTextConfig
from bargain_ray.games.freetext.engine import ALLOCATION_TYPES, VERDICT_KEYS, Said, State
from bargain_ray.games.kit import wording
from bargain_ray.games.kit.wording import REPAIR, SCHEMA, Text, framed
from bargain_ray.games.provenance import ours

OPENING = "The conversation begins now. Send your first message to the other party."
REPAIR_HEAD = wording.NOT_ACCEPTED.format(what="message", error="").rstrip()

_BRIEF = (
    "You are negotiating with another party over a single {object}. There is exactly one {object}, "
    "and you claim it. You must talk with the other party and reach an agreement about what happens "
    "to the {object}. Nothing is decided until you both agree; you cannot simply take it. "
    "Your situation: {situation} How to behave: - Reply with one short message per turn: "
    "{min_sentences} to {max_sentences} sentences, plain conversational text. - Speak in the first "
    "person, directly to the other party. No narration, no stage directions, no bullet points. "
    "- Negotiate for the outcome that is best for you."
)

# Seed 004's line breaks are kept: the orange renders its instructions byte for byte.
_OBSERVER = """\
You silently observe a negotiation between two parties over a single {object}. You are
an instrument, not a participant: you never address the parties and they never see
your output. Read the transcript and report what has happened so far.
Set agreement_reached to true when the parties have evidently settled on an
arrangement: one party has proposed what happens to the {object} and the other has
assented. The proposal need not be exact or fully detailed — "{example}", answered with agreement, counts, and so does agreeing to
a division whose fine details are left to be worked out later. Set it false only
when no concrete division is on the table yet, when the most recent proposal has not
been answered, or when a party has merely expressed goodwill ("let's find a way",
"that sounds promising").
Classify allocation_type:
- integrative_full: divided along the part axis AND each party ends up with all
of what it needs — {part_one} entirely to one party and
{part_two} entirely to the other. Neither
gives up any of its own part. No surplus is left unclaimed.
- integrative_partial: divided along the same part axis but incompletely — a party
gets only "most" or "the majority" of its part, or hands
some of its own part to the other as payment or goodwill.
The right idea, but surplus is wasted.
- distributive: divided by quantity — cut in half, shared, taken in turns, or any
split where each party gets a fraction of the whole {whole}. Both needs are only partly met.
- lopsided: one party ends up with the entire {object} and the other with nothing.
- none: no agreement has been reached yet.
allocation: one plain sentence describing who ends up with what.
rationale: one or two sentences justifying the classification.
confidence: your confidence in this reading, between 0 and 1."""

TRANSCRIPT_HEAD = "Transcript so far:"
_ASK = (
    "Report what has happened so far as exactly one JSON object and nothing else, with the keys "
    '"agreement_reached" (true or false), "allocation_type" ('
    + ", ".join(f'"{t}"' for t in ALLOCATION_TYPES)
    + '), "allocation" (one sentence), "rationale" (one or two sentences) and "confidence" '
    "(a number from 0 to 1)."
)

VERDICT_SCHEMA: dict[str, Any] = {  # free-form: a JSON Schema, sent to the provider as is
    "type": "object",
    "properties": {
        "agreement_reached": {"type": "boolean"},
        "allocation_type": {"type": "string", "enum": list(ALLOCATION_TYPES)},
        "allocation": {"type": "string"},
        "rationale": {"type": "string"},
        "confidence": {"type": "number"},
    },
    "required": list(VERDICT_KEYS),
    "additionalProperties": False,
}
"""For providers with structured output; ``engine.parse_verdict`` checks the same rules."""


def brief(config: FreeTextConfig, role: str) -> str:
    """A party's private brief, the system prompt of every call it makes."""
    return _BRIEF.format(
        object=config.object,
        situation=config.parties[role].situation,
        min_sentences=config.min_sentences,
        max_sentences=config.max_sentences,
    )


def observer_instructions(config: FreeTextConfig) -> str:
    """The observer's system prompt: seed 004's classification instructions."""
    one, two = config.observer.parts
    return _OBSERVER.format(
        object=config.object, example=config.observer.example, part_one=one, part_two=two,
        whole=config.observer.whole,
    )


def transcript_text(config: FreeTextConfig, state: State) -> str:
    return "\n\n".join(f"Turn {s.turn}, {config.parties[s.role].label}: {s.text}" for s in state.transcript)


def prompt(config: FreeTextConfig, state: State, role: str) -> Prompt:
    """A fresh request carrying the whole conversation, rendered for ``role`` only."""
    if role == config.observer.role:
        user = f"{TRANSCRIPT_HEAD}\n\n{transcript_text(config, state)}\n\n{_ASK}"
        return Prompt(
            system=observer_instructions(config),
            messages=(Message(role="user", content=user),),
            json_schema=VERDICT_SCHEMA,
            form=VERDICT_FORM,
        )
    opening = (Message(role="user", content=OPENING),) if state.first_speaker == role else ()
    said = tuple(
        Message(role="assistant" if s.role == role else "user", content=s.text) for s in state.transcript
    )
    return Prompt(system=brief(config, role), messages=(*opening, *said), form=message_form(config))


def message_form(config: FreeTextConfig) -> ReplyForm:
    """A party's move for a person: the message box, whose text is the reply."""
    hint = f"{config.min_sentences} to {config.max_sentences} sentences, to the other party"
    box = Field(path=("message",), label="Your message", kind="text", hint=hint, max_words=config.max_words)
    return ReplyForm(moves=(Move(label="Send", reply=None, fields=(box,)),))


VERDICT_FORM = ReplyForm(moves=(Move(label="Report", reply={}, fields=(
    Field(path=("agreement_reached",), label="agreement_reached", kind="flag"),
    Field(path=("allocation_type",), label="allocation_type", kind="choice", options=ALLOCATION_TYPES),
    Field(path=("allocation",), label="allocation", kind="text", hint="one sentence: who ends up with what"),
    Field(path=("rationale",), label="rationale", kind="text", hint="one or two sentences"),
    Field(path=("confidence",), label="confidence", kind="number", minimum=0, maximum=1),
)),))
"""The observer's move for a person: the verdict's fields (a person may take the observer's seat too)."""


RULES: dict[str, str] = {
    "empty_message": "Your message is empty: write {min_sentences} to {max_sentences} sentences to the other party.",
    "message_too_long": "Your message has {words} words; it must have at most {max_words}.",
    "agreement_not_boolean": '"agreement_reached" must be true or false.',
    "unknown_allocation_type": '"allocation_type" must be one of {types:list}; got {kind!j}.',
    "empty_text": '"{key}" must be a non-empty string.',
    "confidence_out_of_range": '"confidence" must be a number between 0 and 1.',
    "inconsistent_verdict/agreed":
        'With "agreement_reached": true, "allocation_type" must name the kind of division agreed, not "none".',
    "inconsistent_verdict/not_agreed": 'With "agreement_reached": false, "allocation_type" must be "none".',
}
"""Rule code -> the sentence the model reads, beside the kit's shared ones (ours; ``kit.wording`` templates; the config fills the rest)."""


def rules_in_force(config: FreeTextConfig) -> dict[str, str]:
    """The rule table under ``config``: a check its settings turn off has no sentence (or a sentence without the
    range), so turning one off changes a text the fingerprint digests."""
    table = dict(RULES)
    if not config.verdict_confidence_in_range:
        table["confidence_out_of_range"] = '"confidence" must be a number.'
    if not config.verdict_consistent:
        table = {code: text for code, text in table.items() if not code.startswith("inconsistent_verdict")}
    return table


def rule_sentence(config: FreeTextConfig, error: RuleError) -> str:
    return wording.rule_sentence(
        rules_in_force(config), error, min_sentences=config.min_sentences, max_sentences=config.max_sentences,
        max_words=config.max_words, types=ALLOCATION_TYPES,
    )


def repair_message(config: FreeTextConfig, state: State, role: str, error: RuleError) -> str:
    """The answer to an invalid reply; nothing of it reaches the other roles."""
    if role == config.observer.role:
        return wording.repair(str(error), what="verdict")
    return wording.repair(
        str(error), what="message", recorded="Nothing was passed to the other party.",
        again=f"Send your message again: {config.min_sentences} to {config.max_sentences} sentences, "
        "plain conversational text.",
    )


OPENING_LINE = ours("seed 004 shows no message before the first party speaks: the opening line is ours")
TRANSCRIPT_REQUEST = ours("seed 004 gives the observer's instructions, not the request that carries the transcript")


def schemas(config: FreeTextConfig) -> dict[str, dict[str, Any]]:  # free-form: JSON Schemas, sent as is
    """None that depend on the state: a party writes free text (a JSON schema would make it JSON), and the
    observer's verdict schema is one, ``VERDICT_SCHEMA``, already among ``texts``."""
    return {}


def texts(config: FreeTextConfig) -> dict[str, Text]:
    """Every text a model can read under ``config``, with its provenance; the conversation's own
    messages are the parties' words, shown here as placeholders."""
    start = engine.start(config, 0, None)
    first, second = start.first_speaker, engine.other(config, start.first_speaker)
    said = State(first_speaker=first, transcript=(
        Said(turn=1, role=first, text="<message>", sentences=1, words=1),
        Said(turn=2, role=second, text="<message>", sentences=1, words=1),
    ))
    observer = config.observer.role
    why = f"scenario {config.name}'s wording is this project's (its config's source: {config.source})"
    out = {f"brief:{role}": Text(text=(text := brief(config, role)), provenance=framed(config.source, text, why))
           for role in config.parties}
    instructions = observer_instructions(config)
    out["observer:instructions"] = Text(text=instructions, provenance=framed(config.source, instructions, why))
    out["observer:request"] = Text(text=prompt(config, said, observer).messages[-1].content,
                                   provenance=TRANSCRIPT_REQUEST)
    out["observer:verdict_schema"] = Text(text=json.dumps(VERDICT_SCHEMA, sort_keys=True), provenance=SCHEMA)
    out["turn:opening"] = Text(text=OPENING, provenance=OPENING_LINE)
    error = RuleError("<rule>")
    error.sentence = "<rule sentence>"
    out["repair:party"] = Text(text=repair_message(config, start, first, error), provenance=REPAIR)
    out["repair:observer"] = Text(text=repair_message(config, said, observer, error), provenance=REPAIR)
    return out | wording.rule_texts(rules_in_force(config))
