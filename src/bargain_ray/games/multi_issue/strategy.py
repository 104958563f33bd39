"""The offline strategy of the multi-issue family, reading only its brief and the public record."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from bargain_ray.games.kit.concession import Concession, target
from bargain_ray.games.kit.reading import find_match, public_record

_NUM = r"-?\d+(?:\.\d+)?"
_TERM = re.compile(rf"^- (\w+): .*?, any value from ({_NUM}) to ({_NUM})", re.M)
_PART = re.compile(rf"({_NUM}) x \((1 - )?(\w+)/({_NUM})\)")
_LEVEL = re.compile(rf"(\w+) = \(?(\w+)(?: - ({_NUM}))?\)? / ({_NUM})")
_FALLBACK = re.compile(rf"If there is no agreement, your organization gets ({_NUM}) points")
_TURN = re.compile(r"This is turn (\d+) of (\d+)")
_STANDING = re.compile(r"Standing offer: (O\d+), made by [^:]+: (.*?)\. (You may accept it|It is your own offer)")
_DECIMALS = re.compile(r"at most (\w+) decimal places")


class Params(Concession):
    """A multi-issue strategy agent's parameters (``models.<letter>.strategy``)."""

    margin: float = 1.0
    """The least it aims for above its reservation value, in points."""


@dataclass(frozen=True)
class Issue:
    name: str
    lo: float
    hi: float
    weight: float  # points moving from the worst to the best end
    prefers_low: bool


def recognizes(system: str) -> bool:
    return "negotiated terms:" in system and "points =" in system


@lru_cache(maxsize=256)
def _brief(system: str) -> tuple[tuple[Issue, ...], float]:
    """Issues and reservation value read from a brief (cached: a brief is read on every turn)."""
    ranges = {m[0]: (float(m[1]), float(m[2])) for m in _TERM.findall(system)}
    levels = {m[0]: m[1] for m in _LEVEL.findall(system.split("where", 1)[1])}
    issues = []
    for weight, low, symbol, _levels in _PART.findall(system.split("points =", 1)[1]):
        name = levels[symbol]
        lo, hi = ranges[name]
        issues.append(Issue(name, lo, hi, float(weight), bool(low)))
    return tuple(issues), float(find_match(_FALLBACK, system)[1])


def _utility(issues: tuple[Issue, ...], terms: dict[str, float]) -> float:
    total = 0.0
    for i in issues:
        x = (terms[i.name] - i.lo) / (i.hi - i.lo)
        total += i.weight * (1 - x if i.prefers_low else x)
    return total


def _offer_at(issues: tuple[Issue, ...], goal: float, places: int) -> dict[str, float]:
    """Terms worth about ``goal``: give ground first on the terms that matter least."""
    terms = {i.name: (i.lo if i.prefers_low else i.hi) for i in issues}
    excess = sum(i.weight for i in issues) - goal
    for i in sorted(issues, key=lambda i: i.weight):
        if excess <= 0:
            break
        give = min(excess, i.weight)
        move = (i.hi - i.lo) * give / i.weight
        terms[i.name] = i.lo + move if i.prefers_low else i.hi - move
        excess -= give
    return {k: round(v, places) for k, v in terms.items()}


def respond(system: str, messages: list[dict[str, str]], params: Mapping[str, Any]) -> str:  # free-form: the strategy block as written, read as Params
    """One reply in the game's JSON protocol."""
    read = Params.model_validate(params)
    issues, reserve = _brief(system)
    decimals = _DECIMALS.search(system)
    places = {"one": 1, "two": 2, "three": 3}.get(decimals[1] if decimals else "two", 2)
    user = public_record(messages)
    standing = _STANDING.search(user)
    theirs = None
    if standing and standing[3].startswith("You may"):
        theirs = {k: float(v) for k, v in re.findall(rf"(\w+) ({_NUM})", standing[2])}
    offer_id = standing[1] if standing else None
    if "This is the final reply" in user:
        take = theirs is not None and _utility(issues, theirs) >= reserve
        return _reply("ACCEPT" if take else "END", offer_id if take else None, None,
                      "We accept." if take else "We end without a deal.")
    turn, total = (int(x) for x in find_match(_TURN, user).groups())
    best = sum(i.weight for i in issues)
    margin = read.margin
    goal = target(best, reserve + margin, (turn - 1) / max(total - 1, 1), read.concession_exponent())
    if theirs is not None and _utility(issues, theirs) >= max(goal, reserve + margin):
        return _reply("ACCEPT", offer_id, None, "These terms work for us; we accept.")
    if theirs is not None and turn >= total - 1 and _utility(issues, theirs) > reserve:
        return _reply("ACCEPT", offer_id, None, "Time is short; we accept these terms.")
    terms = _offer_at(issues, goal, places)
    return _reply("OFFER", None, terms, "Here is our proposal; we can move on the terms that matter less to us.")


def _reply(action: str, offer_id: str | None, terms: dict[str, float] | None, message: str) -> str:
    return json.dumps({"action": action, "offer_id": offer_id, "terms": terms, "message": message})
