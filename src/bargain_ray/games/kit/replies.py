"""Reading a reply as one JSON object: the rules every JSON-speaking family shares (their sentences: ``wording``)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal
from itertools import accumulate
from typing import Any, TypeGuard, TypeVar

from bargain_ray.core.text import whole_strings
from bargain_ray.games.base import RuleError
from bargain_ray.games.provenance import ours, rule

S = TypeVar("S")
V = TypeVar("V")

_FENCE = re.compile(r"```(?:json)?[ \t]*\n?(.*?)\n?[ \t]*```", re.S)


MAX_REPLY_CHARS = 1_000_000
"""Characters of a reply read as JSON (ours): a family's reply is a few hundred; a longer one is not read."""
MAX_DEPTH = 32
"""Nesting of arrays and objects a reply may have (ours: a family's reply nests three deep). A deeper one is not
read, the same wherever it is parsed (Python's own limit depends on the stack in use), and every later step (its
strings made whole, a rule sentence quoting a value) stays shallow."""
MAX_DIGITS = 28
"""Digits a number of a reply may have, and places it may reach on either side of the point (ours): Decimal's
default precision, so every comparison and rounding of a number read is exact, and ``1e999999999`` or a
5,000-digit integer is not read."""

LIMITS = rule("reply_limits", f"a JSON reply is read within {MAX_REPLY_CHARS:,} characters, {MAX_DEPTH} levels of "
              f"nesting and numbers of {MAX_DIGITS} digits (as many places either side of the point); past them it "
              "breaks not_one_json_object", ours("no seed bounds a reply: the limits are ours, so a degenerate reply "
                                                 "is a format failure with its repair, never a crash"))
"""The limits, as every JSON-speaking family's protocol declares them."""

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_BRACKET = re.compile(r"[\[\]{}]")


class _BeyondLimits(ValueError):
    """A number past ``MAX_DIGITS``: the reply is not read."""


def json_object(reply: str, *, fence: bool = False, exact: bool = False) -> dict[str, Any]:  # free-form: a model's JSON reply as received
    """The reply's one JSON object, or RuleError ``not_one_json_object``, never another exception.

    ``fence``: one markdown code fence around the object is tolerated. ``exact``:
    numbers are read as Decimals, so 64.125 keeps its three decimals. A lone surrogate the
    model escaped (``"\\ud800"``) is read as U+FFFD (``core.text``), so no state holds invalid text.
    A reply past ``MAX_REPLY_CHARS``, ``MAX_DEPTH`` or ``MAX_DIGITS`` is not one JSON object as read here.
    """
    text = reply.strip()
    if len(text) > MAX_REPLY_CHARS:
        raise RuleError("not_one_json_object")
    if fence and (fenced := _FENCE.fullmatch(text)):
        text = fenced[1]
    try:
        obj = (_EXACT if exact else _PLAIN).decode(text) if _nesting(text) <= MAX_DEPTH else None
    except ValueError:
        obj = None
    if not isinstance(obj, dict):
        raise RuleError("not_one_json_object")
    return whole_strings(obj)


def _nesting(text: str) -> int:
    """The deepest nesting of brackets outside JSON strings: at least how deep ``json.loads`` recurses into
    ``text`` before it returns or fails."""
    steps = (1 if b in "[{" else -1 for b in _BRACKET.findall(_STRING.sub("", text)))
    return max(accumulate(steps, initial=0))


def _number(literal: str) -> Decimal:
    value = Decimal(literal)
    digits, exponent = value.as_tuple()[1:]
    if len(digits) > MAX_DIGITS or not isinstance(exponent, int) or exponent < -MAX_DIGITS \
            or value.adjusted() >= MAX_DIGITS:
        raise _BeyondLimits(literal)
    return value


_EXACT = json.JSONDecoder(parse_float=_number, parse_int=_number)
_PLAIN = json.JSONDecoder(parse_float=lambda s: float(_number(s)), parse_int=lambda s: int(_number(s)))


def check_unknown_keys(obj: dict[str, Any], keys: Sequence[str]) -> None:  # free-form: a model's JSON reply as received
    """No key outside ``keys`` (the first unknown one is named)."""
    unknown = [k for k in obj if k not in keys]
    if unknown:
        raise RuleError("unknown_key", key=unknown[0], keys=tuple(keys))


def check_keys(obj: dict[str, Any], keys: Sequence[str]) -> None:  # free-form: a model's JSON reply as received
    """Every key of ``keys`` and no other, unknown keys named first."""
    check_unknown_keys(obj, keys)
    missing = [k for k in keys if k not in obj]
    if missing:
        raise RuleError("missing_key", key=missing[0])


def read_named(given: object, specs: Mapping[str, S], read: Callable[[S, Any], V], *, noun: str,
               absent: str) -> dict[str, V]:
    """``given`` as one object naming every key of ``specs`` and no other (an offer's terms, a deal's issues),
    each value read by ``read(spec, value)`` in ``specs`` order, which raises its own rules.

    Rules, the first fault found: ``absent`` when ``given`` is no object, ``unknown_<noun>`` (the first
    unknown key), then per name in order ``missing_<noun>`` or what ``read`` raises; facts ``<noun>`` (the
    name) and ``<noun>s`` (every name).
    """
    names = tuple(specs)
    if not isinstance(given, dict):
        raise RuleError(absent, None, **{f"{noun}s": names})
    for key in given:
        if key not in specs:
            raise RuleError(f"unknown_{noun}", **{noun: key, f"{noun}s": names})
    out: dict[str, V] = {}
    for name, spec in specs.items():
        if name not in given:
            raise RuleError(f"missing_{noun}", **{noun: name})
        out[name] = read(spec, given[name])
    return out


def is_number(x: object) -> TypeGuard[Decimal]:
    """A finite number as ``json_object(exact=True)`` reads it (never a bool or a string)."""
    return isinstance(x, Decimal) and x.is_finite()


MAX_DECIMALS = 6
"""Decimal places a family's ``decimals`` setting may allow (ours): prices and terms reach the journal and the tables
as JSON numbers (floats), exact to 15 significant digits, so 6 leave 9 digits before the point; and prompts, error
texts and metrics render each number to that many places."""


MAX_SIGNIFICANT = 15
"""Digits a number a game's config lets a reply write may have in all (ours): prices and terms reach the journal and
the tables as JSON numbers (floats), exact to 15 significant digits."""


def too_long(value: Decimal | float, decimals: int) -> bool:
    """Whether a number of ``value``'s size written with ``decimals`` places has more than ``MAX_SIGNIFICANT``
    digits (a table would not hold it exactly)."""
    exact = Decimal(str(value))
    return exact != 0 and exact.adjusted() + 1 + decimals > MAX_SIGNIFICANT


def decimals_of(value: Decimal) -> int:
    """Decimal places a number really has (64.100 has one)."""
    exponent = value.normalize().as_tuple().exponent
    return max(0, -exponent) if isinstance(exponent, int) else 0
