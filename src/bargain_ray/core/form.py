"""What a person fills in a human seat: the moves a turn offers, and the reply text each makes.

A family renders a turn's form beside its prompt (``Prompt.form``), from the state it already has: the person
gets the choices the reply format offers in that state (an offer's terms with their ranges, the standing offer to
accept), and the form makes the text the engine reads, parsed and checked as a model's reply is. A value that
breaks a rule (a term out of its range) is sent as typed: the engine answers it with the repair a model gets.
"""

from __future__ import annotations

import json
import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, JsonValue

NUMBER = re.compile(r"-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?")
"""A JSON number as a person may type it: sent as typed, so its decimals reach the engine unchanged."""


class Field(BaseModel):
    """One input of a move: where its value goes in the reply (``path`` into the JSON object; empty for a reply
    that is the text itself) and what a person is told about it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: tuple[str, ...]
    label: str
    kind: Literal["number", "text", "choice", "flag"]
    hint: str = ""
    minimum: float | None = None
    maximum: float | None = None
    decimals: int | None = None
    options: tuple[str, ...] = ()
    optional: bool = False
    """Left empty, a number is null and a text is empty."""
    max_words: int | None = None
    """The words the reply allows (the page counts them as the person types)."""
    max_chars: int | None = None


class Move(BaseModel):
    """One move a turn offers (``OFFER``, ``ACCEPT O3``, a message): the reply's fixed keys in order, and the
    fields a person fills. ``reply`` None: the reply is the one text field as typed (free text)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    label: str
    reply: dict[str, JsonValue] | None
    fields: tuple[Field, ...] = ()


class ReplyForm(BaseModel):
    """The moves of one turn; ``reply`` makes the text a chosen move sends."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    moves: tuple[Move, ...]

    def reply(self, move: int, values: dict[str, str]) -> str:
        """The reply text of ``moves[move]`` filled with ``values`` (each field's text as typed, keyed by its path
        joined with dots); raises ValueError for a move that does not exist."""
        if not 0 <= move < len(self.moves):
            raise ValueError(f"no move {move}: this turn has {len(self.moves)}")
        chosen = self.moves[move]
        typed = {".".join(f.path): values.get(".".join(f.path), "") for f in chosen.fields}
        if chosen.reply is None:
            return next(iter(typed.values()), "")
        obj: dict[str, object] = json.loads(json.dumps(chosen.reply))
        for f in chosen.fields:
            place = obj
            for key in f.path[:-1]:
                if not isinstance(place.get(key), dict):
                    place[key] = {}
                place = place[key]  # type: ignore[assignment]
            place[f.path[-1]] = _value(f, typed[".".join(f.path)])
        return _dump(obj)


class _Raw(str):
    """A number as the person typed it, written into the JSON unchanged."""


def _value(f: Field, text: str) -> object:
    text = text.strip() if f.kind != "text" else text
    if f.kind == "number":
        if not text and f.optional:
            return None
        return _Raw(text) if NUMBER.fullmatch(text) else text  # not a number: sent as a string, which a rule refuses
    if f.kind == "flag":
        return text.lower() in ("true", "yes", "on", "1")
    return text


def _dump(value: object) -> str:
    """JSON of ``value`` with each ``_Raw`` number written as typed."""
    if isinstance(value, _Raw):
        return str.__str__(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)}: {_dump(v)}" for k, v in value.items()) + "}"
    return json.dumps(value, ensure_ascii=False)
