"""Pieces of the legal-move schemas: JSON Schemas a constrained decoder can only fill with a legal reply.

Each family builds its schema from the state (``prompts.legal_schema``): only the actions legal now, ids as
constants, numbers on their grid, words within their limit. The engine still checks every reply; the schema only
keeps a decoder that honours it from writing anything else. Every bound here is a subset of what the engine
accepts (ours: a schema may refuse a legal reply, never admit an illegal one).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

Schema = dict[str, Any]  # free-form: a JSON Schema, sent to the provider as is

NULL: Schema = {"type": "null"}

TEXT_CHARS = 200
"""Characters of a free-text field no rule bounds (a scratchpad, a private reasoning, a message with no cap; ours):
a decoder filling it cannot run past its output budget and cut the JSON off."""


def on_grid(low: float | Decimal, high: float | Decimal, decimals: int) -> Schema:
    """A number from ``low`` to ``high`` with at most ``decimals`` places: an integer at 0 places, else
    ``multipleOf`` one unit of the last place."""
    if decimals == 0:
        return {"type": "integer", "minimum": _plain(low), "maximum": _plain(high)}
    step = Decimal(1).scaleb(-decimals)
    return {"type": "number", "minimum": _plain(low), "maximum": _plain(high), "multipleOf": float(step)}


def _plain(x: float | Decimal) -> int | float:
    value = Decimal(str(x))
    return int(value) if value == value.to_integral_value() else float(value)


def words_at_most(words: int) -> Schema:
    """A string that has at most ``words`` whitespace-separated words whatever it holds: a word needs a
    character and a separator after every word but the last, so ``2 * words - 1`` characters."""
    return {"type": "string", "maxLength": max(0, 2 * words - 1)}


def bounded_text(chars: int | None = None) -> Schema:
    """A string of at most ``chars`` characters (``TEXT_CHARS`` when no rule bounds it)."""
    return {"type": "string", "maxLength": TEXT_CHARS if chars is None else chars}


def reply_object(properties: Schema) -> Schema:
    """One reply object: exactly these keys, every one required."""
    return {"type": "object", "additionalProperties": False, "required": list(properties), "properties": properties}


def one_of(branches: list[Schema]) -> Schema:
    """Any one branch (a single branch stands alone: some decoders read a top-level object more readily)."""
    return branches[0] if len(branches) == 1 else {"anyOf": branches}
