"""The offline strategy of the multi-issue family, reading only its brief and the public record.

It reads its scoring exactly as the brief states it (each term's weight, level formula and preferred end, its
no-agreement points), so it offers legal terms for any scenario the config accepts: every term on the brief's
decimal grid and inside its range, a term it gives no weight to included. Its aim falls from its best deal toward
its no-agreement points (``kit.concession``); it gives ground first on the terms that move its points least.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal
from fractions import Fraction
from functools import lru_cache
from typing import Any

from bargain_ray.games.kit.concession import Concession, target
from bargain_ray.games.kit.reading import find_match, public_record, within_words

_NUM = r"-?\d+(?:\.\d+)?"
_TERM = re.compile(rf"^- (\w+): .*?, any value from ({_NUM}) to ({_NUM})", re.M | re.S)
_SCORING = re.compile(r"For any agreement, points = (.*?), where (.*?)\. Higher points are better", re.S)
_PART = re.compile(rf"({_NUM}) x \((1 - )?(\w+)/({_NUM})\)")
_LEVEL = re.compile(rf"(\w+) = \(?(\w+)(?: - ({_NUM}))?\)? / ({_NUM})")
_FALLBACK = re.compile(rf"If there is no agreement, your organization gets ({_NUM}) points")
_TURN = re.compile(r"This is turn (\d+) of (\d+)")
_DECIMALS = re.compile(r"at most (\w+) decimal places")
_WORDS = re.compile(r'"message" is at most (\d+) words')
_PLACES = ("zero", "one", "two", "three", "four", "five", "six")


class Params(Concession):
    """A multi-issue strategy agent's parameters (``models.<letter>.strategy``)."""

    margin: float = 1.0
    """The least it aims for above its reservation value, in points."""


@dataclass(frozen=True)
class Issue:
    """One term as the brief scores it: points = ``weight`` x share (1 - share when low is preferred), share =
    (value - ``offset``) / ``scale`` / ``levels``; values from ``lo`` to ``hi``."""

    name: str
    lo: Fraction
    hi: Fraction
    weight: Fraction
    prefers_low: bool
    offset: Fraction
    scale: Fraction
    levels: Fraction

    def points(self, value: Fraction) -> Fraction:
        share = (value - self.offset) / self.scale / self.levels
        return self.weight * (1 - share if self.prefers_low else share)

    @property
    def best(self) -> Fraction:
        """The value of its range this side scores highest (the middle when it gives the term no weight)."""
        if self.weight == 0:
            return (self.lo + self.hi) / 2
        return self.lo if self.points(self.lo) >= self.points(self.hi) else self.hi

    @property
    def span(self) -> Fraction:
        """Points between the term's best and worst end for this side."""
        return abs(self.points(self.hi) - self.points(self.lo))


@dataclass(frozen=True)
class Brief:
    issues: tuple[Issue, ...]
    reserve: Fraction
    places: int
    words: int

    def utility(self, terms: dict[str, Fraction]) -> Fraction:
        return sum((i.points(terms[i.name]) for i in self.issues), Fraction(0))

    @property
    def best(self) -> Fraction:
        return self.utility({i.name: i.best for i in self.issues})


def recognizes(system: str) -> bool:
    return "negotiated terms:" in system and "points =" in system


def _places(word: str) -> int:
    return int(word) if word.isdigit() else _PLACES.index(word)


@lru_cache(maxsize=256)
def _brief(system: str) -> Brief:
    """What the brief says of the terms, the scoring and the format (cached: a brief is read on every turn)."""
    ranges = {m[0]: (Fraction(m[1]), Fraction(m[2])) for m in _TERM.findall(system)}
    parts, where = find_match(_SCORING, system).groups()
    levels = {m[0]: (m[1], Fraction(m[2] or 0), Fraction(m[3])) for m in _LEVEL.findall(where)}
    issues = []
    for weight, low, symbol, count in _PART.findall(parts):
        name, offset, scale = levels[symbol]
        lo, hi = ranges[name]
        issues.append(Issue(name, lo, hi, Fraction(weight), bool(low), offset, scale, Fraction(count)))
    return Brief(tuple(issues), Fraction(find_match(_FALLBACK, system)[1]), _places(find_match(_DECIMALS, system)[1]),
                 int(find_match(_WORDS, system)[1]))


def _standing(brief: Brief, user: str) -> tuple[str, dict[str, Fraction]] | None:
    """The other side's standing offer (its id and terms) when this side may accept it, else None."""
    terms = ", ".join(rf"{i.name} ({_NUM})" for i in brief.issues)
    found = re.search(rf"Standing offer: (O\d+), made by .*?: {terms}\. You may accept it", user, re.S)
    if found is None:
        return None
    values = found.groups()[1:]
    return found[1], {i.name: Fraction(v) for i, v in zip(brief.issues, values, strict=True)}


def _offer_at(brief: Brief, goal: Fraction) -> dict[str, Decimal]:
    """Terms worth about ``goal`` on the brief's grid: ground is given first on the terms that move the points
    least (a term worth nothing to this side sits in the middle of its range)."""
    terms = {i.name: i.best for i in brief.issues}
    excess = brief.best - goal
    for i in sorted(brief.issues, key=lambda i: i.span):
        if excess <= 0:
            break
        if i.span == 0:
            continue
        give = min(excess, i.span)
        worst = i.hi if i.best == i.lo else i.lo
        terms[i.name] = i.best + (worst - i.best) * give / i.span
        excess -= give
    return {name: _on_grid(value, brief.places) for name, value in terms.items()}


def _on_grid(value: Fraction, places: int) -> Decimal:
    """``value`` to ``places`` decimals; the range's ends are on that grid, so a value inside stays inside."""
    exact = Decimal(value.numerator) / Decimal(value.denominator)
    return exact.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_EVEN)


def respond(system: str, messages: list[dict[str, str]], params: Mapping[str, Any]) -> str:  # free-form: the strategy block as written, read as Params
    """One reply in the game's JSON protocol."""
    read = Params.model_validate(params)
    brief = _brief(system)
    user = public_record(messages)
    standing = _standing(brief, user)
    offer_id, theirs = (None, None) if standing is None else (standing[0], brief.utility(standing[1]))
    if "This is the final reply" in user:
        take = theirs is not None and theirs >= brief.reserve
        return _reply(brief, "ACCEPT" if take else "END", offer_id if take else None, None,
                      "We accept." if take else "We end without a deal.")
    turn, total = (int(x) for x in find_match(_TURN, user).groups())
    margin = Fraction(str(read.margin))
    floor = brief.reserve + margin
    goal = Fraction(target(float(brief.best), float(floor), (turn - 1) / max(total - 1, 1), read.concession_exponent()))
    if theirs is not None and theirs >= max(goal, floor):
        return _reply(brief, "ACCEPT", offer_id, None, "These terms work for us; we accept.")
    if theirs is not None and turn >= total - 1 and theirs > brief.reserve:
        return _reply(brief, "ACCEPT", offer_id, None, "Time is short; we accept these terms.")
    return _reply(brief, "OFFER", None, _offer_at(brief, goal),
                  "Here is our proposal; we can move on the terms that matter less to us.")


def _reply(brief: Brief, action: str, offer_id: str | None, terms: dict[str, Decimal] | None, message: str) -> str:
    """The reply as JSON, each term written as the exact decimal it is (a float could print 1e+16), the message
    within the brief's word limit."""
    shown = "null" if terms is None else "{" + ", ".join(f"{json.dumps(k)}: {v:f}" for k, v in terms.items()) + "}"
    return (f'{{"action": {json.dumps(action)}, "offer_id": {json.dumps(offer_id)}, "terms": {shown}, '
            f'"message": {json.dumps(within_words(message, brief.words))}}}')
