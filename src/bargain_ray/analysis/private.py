"""The private-field rule, in one place: which fields of a turn only its speaker saw.

A field is private when its name says so (``reasoning_private``, ``scratchpad``, ``reasoning``) or its family's
Game names it in ``private_fields`` (bargaining's ``actual_valuation``: the speaker's true valuation, recorded
on every turn, never shown to the other side). The report, the live view and the dataset card all ask here, so
a private field is marked private wherever a reader meets it.
"""

from __future__ import annotations

from functools import cache
from typing import Any, NamedTuple

from pydantic import JsonValue

from bargain_ray.analysis.per_game import game_class
from bargain_ray.core.records import FamilyFields

PRIVATE_KEYS = ("private", "scratchpad", "reasoning")
"""A field whose name contains one of these is private to the speaker, in every family."""


@cache
def declared_private(family: str | None) -> frozenset[str]:
    """The fields a family's Game declares private beyond those named so (none for a family this install lacks)."""
    cls = game_class(family)
    return frozenset(cls.private_fields if cls else ())


def is_private(family: str | None, field: str) -> bool:
    return field in declared_private(family) or any(p in field.lower() for p in PRIVATE_KEYS)


def split_private(family: str | None, fields: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:  # free-form: a family's turn fields (or a reply's keys) as recorded
    """(public, private) parts of a turn's fields (or a reply's keys), in their order."""
    public = {k: v for k, v in fields.items() if not is_private(family, k)}
    return public, {k: v for k, v in fields.items() if k not in public}


class TurnParts(NamedTuple):
    """A turn's fields as a reader shows them: the message the other side read, the other public fields, and apart
    the fields only the speaker saw; each as the JSON the record writes (a tuple: its parts come from a model
    already, and each reader's own model validates what it shows)."""

    message: str | None
    public: dict[str, JsonValue]
    private: dict[str, JsonValue]


def turn_parts(family: str | None, fields: FamilyFields) -> TurnParts:
    """``fields`` (a family's model, or as read back) split by the private-field rule. Every family's fields are
    shown alike, field by field, so the report and the live view read them as the JSON the family's model writes."""
    data = fields.written()
    message = data.pop("message", None)
    public, private = split_private(family, data)
    return TurnParts(message=None if message is None else str(message), public=public, private=private)


def private_columns(families: list[str], columns: list[str]) -> list[str]:
    """The columns of a table that hold a field private to a turn's speaker under any of ``families``."""
    return [c for c in columns if any(is_private(f, c) for f in families)]
