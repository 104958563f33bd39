"""Reading a reply as one JSON object: the rules every JSON-speaking family shares (their sentences: ``wording``)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from bargain_ray.core.text import whole_strings
from bargain_ray.games.base import RuleError

_FENCE = re.compile(r"```(?:json)?[ \t]*\n?(.*?)\n?[ \t]*```", re.S)


def json_object(reply: str, *, fence: bool = False, exact: bool = False) -> dict[str, Any]:
    """The reply's one JSON object, or RuleError ``not_one_json_object``.

    ``fence``: one markdown code fence around the object is tolerated. ``exact``:
    numbers are read as Decimals, so 64.125 keeps its three decimals. A lone surrogate the
    model escaped (``"\\ud800"``) is read as U+FFFD (``core.text``), so no state holds invalid text.
    """
    text = reply.strip()
    if fence and (fenced := _FENCE.fullmatch(text)):
        text = fenced[1]
    numbers = {"parse_float": Decimal, "parse_int": Decimal} if exact else {}
    try:
        obj = json.loads(text, **numbers)
    except ValueError:
        obj = None
    if not isinstance(obj, dict):
        raise RuleError("not_one_json_object")
    return whole_strings(obj)


def check_unknown_keys(obj: dict[str, Any], keys: Sequence[str]) -> None:
    """No key outside ``keys`` (the first unknown one is named)."""
    unknown = [k for k in obj if k not in keys]
    if unknown:
        raise RuleError("unknown_key", key=unknown[0], keys=tuple(keys))


def check_keys(obj: dict[str, Any], keys: Sequence[str]) -> None:
    """Every key of ``keys`` and no other, unknown keys named first."""
    check_unknown_keys(obj, keys)
    missing = [k for k in keys if k not in obj]
    if missing:
        raise RuleError("missing_key", key=missing[0])


def is_number(x: object) -> bool:
    """A finite number as ``json_object(exact=True)`` reads it (never a bool or a string)."""
    return isinstance(x, Decimal) and x.is_finite()


def decimals_of(value: Decimal) -> int:
    """Decimal places a number really has (64.100 has one)."""
    exponent = value.normalize().as_tuple().exponent
    return max(0, -exponent) if isinstance(exponent, int) else 0
