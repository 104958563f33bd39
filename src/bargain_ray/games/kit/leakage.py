"""Does a public message give away a private number? The one detector every family with private values uses.

The rules are ours (no seed gives a detector; seed 002's leakage heuristic, any numeral equal to the true
valuation, is kept apart as bargaining's ``msg_leakage``): a message leaks a private number when it writes
that number (within ``tolerance``) no more than ``window`` words from a cue, a word that says what the
number is (``cost``, ``points``, ``threshold``, an option's name, ...). Numbers inside names (``P2``,
``opt1``, ``issue0``) are not numerals. A message is read as it was written, whether or not the other side saw
it: the no-talk condition (``messages: false``) measures what was said, as the talking arm does.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Collection, Iterable
from fractions import Fraction

from bargain_ray.core.records import Scalar

_TOKEN = re.compile(r"[^\W\d_][\w-]*|(?<![\w.])\d+(?:\.\d+)?(?![\w])")
"""Words (starting with a letter) and numerals standing alone, in order."""
WINDOW = 4
"""How many words from a cue a number still says what the cue names."""


def _tokens(text: str) -> list[str]:
    return [t.lower() for t in _TOKEN.findall(text)]


def _is_number(token: str) -> bool:
    return token[0].isdigit()


def cued_numbers(text: str, cues: Collection[str], window: int = WINDOW) -> list[Fraction]:
    """The numerals of ``text`` within ``window`` words of a cue (a word starting with one of ``cues``)."""
    tokens = _tokens(text)
    heads = tuple(cues)
    cued = [i for i, t in enumerate(tokens) if not _is_number(t) and t.startswith(heads)]
    return [Fraction(t) for i, t in enumerate(tokens)
            if _is_number(t) and any(abs(i - c) <= window for c in cued)]


def all_numbers(text: str) -> list[Fraction]:
    """Every numeral of ``text`` standing alone."""
    return [Fraction(t) for t in _tokens(text) if _is_number(t)]


def leaks(numbers: Iterable[Fraction], private: Collection[Fraction], tolerance: Fraction = Fraction(0)) -> bool:
    """Whether any of ``numbers`` is one of the ``private`` numbers, within ``tolerance``."""
    return any(abs(n - p) <= tolerance for n in numbers for p in private)


def flag(leaked: bool) -> float:
    """A message's figure: 1 leaked, 0 not."""
    return 1.0 if leaked else 0.0


def per_role(rows: list[dict[str, Scalar]], roles: Iterable[str], key: str = "leakage") -> dict[str, Scalar]:
    """Per game: each role's share of its messages flagged (``<role>_leakage``), and whether any message of the
    game was (``leakage_any``); None where a role (or the game) has no scored message."""
    out: dict[str, Scalar] = {}
    flags = [r[key] for r in rows if r[key] is not None]
    for role in roles:
        mine = [float(v) for r in rows if r["role"] == role and (v := r[key]) is not None]
        out[f"{role}_{key}"] = statistics.fmean(mine) if mine else None
    out[f"{key}_any"] = (1.0 if any(flags) else 0.0) if flags else None
    return out
