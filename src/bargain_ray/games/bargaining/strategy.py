"""The offline strategy of the bargaining family, reading only its own prompt text.

It concedes over price with a time-dependent tactic (``bargain_ray.games.kit.concession``)
and states its valuation truthfully, inflated by ``bluff``, or not at all
(``params["claim"]``: ``truthful``, ``inflated`` or ``silent``). ``params["noise"]`` (default 0: off)
adds one Gaussian draw of that SD to every claim of a game (to 2 decimals), drawn from the role's brief,
so from the unit's seed: a pilot whose variance is known (``conf/grid/power_pilot.yaml``); ours.
"""

from __future__ import annotations

import json
import math
import random
import re
from typing import Any

from bargain_ray.games.kit.concession import exponent, target
from bargain_ray.games.kit.reading import public_record

_NUM = r"\d+(?:\.\d+)?"
_ROLE = re.compile(r"You are the (seller|buyer) in a bargaining game over")
_VALUE = re.compile(rf"Your private (?:cost|value) of the item is ({_NUM})")
_RANGE = re.compile(rf'"offer", a number from ({_NUM}) to ({_NUM})')
_ROUND = re.compile(r"This is round (\d+) of (\d+)")
_STANDING = re.compile(rf"Standing offer: the (?:seller|buyer)'s offer of ({_NUM})")
CLAIMS = ("truthful", "inflated", "silent")


def recognizes(system: str) -> bool:
    return _ROLE.search(system) is not None and _VALUE.search(system) is not None


def _claim(params: dict[str, Any], seller: bool, value: float, lo: float, hi: float) -> float | None:
    kind = params.get("claim", "truthful")
    if kind not in CLAIMS:
        raise ValueError(f"unknown claim {kind!r}; known: {', '.join(CLAIMS)}")
    if kind == "silent":
        return None
    bluff = float(params.get("bluff", 20)) if kind == "inflated" else 0.0
    return min(hi, value + bluff) if seller else max(lo, value - bluff)


def respond(system: str, messages: list[dict[str, str]], params: dict[str, Any]) -> str:
    """One reply in the game's JSON protocol."""
    seller = _ROLE.search(system)[1] == "seller"
    value = float(_VALUE.search(system)[1])
    lo, hi = (float(x) for x in _RANGE.search(system).groups())
    user = public_record(messages)
    n, total = (int(x) for x in _ROUND.search(user).groups())
    standing = _STANDING.search(user)
    margin = float(params.get("margin", 1.0))
    best = hi - value if seller else value - lo
    goal = max(target(best, margin, (n - 1) / max(total - 1, 1), exponent(params)), margin)
    claim = _claim(params, seller, value, lo, hi)
    if claim is not None and params.get("noise"):  # one draw a game: seeded by the brief, which the unit's seed sets
        claim = round(claim + random.Random(system).gauss(0.0, float(params["noise"])), 2)
    if standing is not None:
        price = float(standing[1])
        gain = price - value if seller else value - price
        if gain >= goal:
            return _reply(claim, None, "accept", "Agreed.", f"gain {gain} meets my goal {goal:.2f} (valuation {value})")
    price = min(hi, math.ceil(value + goal)) if seller else max(lo, math.floor(value - goal))
    said = f"My {'cost' if seller else 'value'} is {claim:g}. " if claim is not None else ""
    return _reply(claim, price, "offer", f"{said}I propose {price:g}.",
                  f"aiming for a gain of {goal:.2f} over my valuation {value:g}")


def _reply(claim: float | None, offer: float | None, action: str, message: str, reasoning: str) -> str:
    return json.dumps({"stated_valuation": claim, "offer": offer, "action": action,
                       "message": message, "reasoning_private": reasoning})
