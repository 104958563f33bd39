"""The offline strategy of the bargaining family, reading only its own prompt text.

It concedes over price with a time-dependent tactic (``bargain_ray.games.kit.concession``)
and states its valuation truthfully, inflated by ``bluff``, or not at all (``Params``).
"""

from __future__ import annotations

import json
import math
import random
import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field

from bargain_ray.games.kit.concession import Concession, target
from bargain_ray.games.kit.reading import find_match, public_record

_NUM = r"-?\d+(?:\.\d+)?"
_ROLE = re.compile(r"You are the (seller|buyer) in a bargaining game over")
_VALUE = re.compile(rf"Your private (?:cost|value) of the item is ({_NUM})")
_RANGE = re.compile(rf'"offer", a number from ({_NUM}) to ({_NUM})')
_ROUND = re.compile(r"This is round (\d+) of (\d+)")
_STANDING = re.compile(rf"Standing offer: the (?:seller|buyer)'s offer of ({_NUM})")
_CHARS = re.compile(r'"message" is free text for the (?:seller|buyer), at most (\d+) characters')


class Params(Concession):
    """A bargaining strategy agent's parameters (``models.<letter>.strategy``)."""

    margin: float = 1.0
    """The least gain over its valuation it aims for."""
    claim: Literal["truthful", "inflated", "silent"] = "truthful"
    """The valuation it states: its own, inflated by ``bluff``, or none."""
    bluff: float = Field(20.0, ge=0)
    """How far an inflated claim overstates (a seller) or understates (a buyer) its valuation."""
    noise: float = Field(0.0, ge=0)
    """The SD of one Gaussian draw added to every claim of a game (to 2 decimals), drawn from the role's brief, so
    from the unit's seed: a pilot whose variance is known (``conf/grid/power_pilot.yaml``); 0: off (ours)."""


def recognizes(system: str) -> bool:
    return _ROLE.search(system) is not None and _VALUE.search(system) is not None


def _claim(params: Params, seller: bool, value: float, lo: float, hi: float) -> float | None:
    if params.claim == "silent":
        return None
    bluff = params.bluff if params.claim == "inflated" else 0.0
    return min(hi, value + bluff) if seller else max(lo, value - bluff)


def respond(system: str, messages: list[dict[str, str]], params: Mapping[str, Any]) -> str:  # free-form: the strategy block as written, read as Params
    """One reply in the game's JSON protocol."""
    read = Params.model_validate(params)
    seller = find_match(_ROLE, system)[1] == "seller"
    value = float(find_match(_VALUE, system)[1])
    lo, hi = (float(x) for x in find_match(_RANGE, system).groups())
    user = public_record(messages)
    n, total = (int(x) for x in find_match(_ROUND, user).groups())
    standing = _STANDING.search(user)
    best = hi - value if seller else value - lo
    goal = max(target(best, read.margin, (n - 1) / max(total - 1, 1), read.concession_exponent()), read.margin)
    claim = _claim(read, seller, value, lo, hi)
    if claim is not None and read.noise:  # one draw a game: seeded by the brief, which the unit's seed sets
        claim = round(claim + random.Random(system).gauss(0.0, read.noise), 2)
    if standing is not None:
        price = float(standing[1])
        gain = price - value if seller else value - price
        if gain >= goal:
            return _reply(claim, None, "accept", "Agreed.", f"gain {gain} meets my goal {goal:.2f} (valuation {value})",
                          system)
    # a whole number inside the price range (whose ends are whole), whatever the valuation
    price = min(max(math.ceil(value + goal) if seller else math.floor(value - goal), math.ceil(lo)), math.floor(hi))
    said = f"My {'cost' if seller else 'value'} is {claim:g}. " if claim is not None else ""
    return _reply(claim, price, "offer", f"{said}I propose {price:g}.",
                  f"aiming for a gain of {goal:.2f} over my valuation {value:g}", system)


def _reply(claim: float | None, offer: float | None, action: str, message: str, reasoning: str, system: str) -> str:
    """The reply as JSON, its message within the brief's cap on characters when it states one. With the channel
    closed it says the same (the other side never sees it), so the no-communication control differs from talk only
    in what is shown."""
    cap = _CHARS.search(system)
    return json.dumps({"stated_valuation": claim, "offer": offer, "action": action,
                       "message": message[: int(cap[1])] if cap else message, "reasoning_private": reasoning})
