"""The offline strategy of the scorable family, reading only its own prompt text.

It knows its own sheet and threshold, the other sheets only when the prompt
prints them as common knowledge, and the live offers from the public record.
Its aim falls from its best package to its threshold over the rounds
(``bargain_ray.games.kit.concession``); it accepts a live offer that meets its aim and
otherwise tables the package at its aim that suits the table best.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bargain_ray.games.kit.concession import Concession, target
from bargain_ray.games.kit.reading import find_match, public_record

_NUM = r"-?\d+(?:\.\d+)?"
_ME = re.compile(r"^You are (.+)\.$", re.M)
_ISSUES = re.compile(r"Issues \(choose exactly one option each\):\n((?:- .*\n?)+)")
_OWN = re.compile(r"Your secret score sheet \(points you get for each option\):\n((?:- .*\n?)+)")
_THRESHOLD = re.compile(rf"Your acceptance threshold: ({_NUM}) points")
_PUBLIC = re.compile(rf"^(.+) \(threshold ({_NUM})\):\n((?:- .*\n?)+)", re.M)
_ROUND = re.compile(r"Round (\d+) of (\d+); this round's order")
_OFFER = re.compile(r"^- (P\d+), tabled by .+?: (.+)\n  (.+)$", re.M)
_TABLE = re.compile(r"^Still at the table: (.+)\. Walked:", re.M)

Sheet = dict[str, dict[str, float]]


class Params(Concession):
    """A scorable strategy agent's parameters (``models.<letter>.strategy``)."""

    margin: float = 0.0
    """The least it aims for above its acceptance threshold, in points."""


@dataclass(frozen=True)
class Live:
    offer_id: str
    deal: dict[str, str]
    supporters: tuple[str, ...]


def recognizes(system: str) -> bool:
    return "parties negotiating a single multi-issue agreement" in system and "Your secret score sheet" in system


def _sheet(block: str) -> Sheet:
    out: Sheet = {}
    for line in block.strip().splitlines():
        issue, rest = line[2:].split(": ", 1)
        out[issue] = {o: float(v) for o, v in (pair.split("=") for pair in rest.split(", "))}
    return out


def _points(sheet: Sheet, deal: dict[str, str]) -> float:
    return sum(sheet[i][o] for i, o in deal.items())


def _live(user: str) -> list[Live]:
    offers = []
    for offer_id, package, votes in _OFFER.findall(user):
        deal = dict(pair.split("=") for pair in package.split(", "))
        accepted = re.match(r"Accepted by (.+?)(?:;|\.$)", votes)
        offers.append(Live(offer_id, deal, tuple(accepted[1].split(", ")) if accepted else ()))
    return offers


ENUMERATED = 4096
"""Packages the strategy weighs by enumerating them all (ours); a larger table is searched from its own best package
(``_packages``), so a turn stays quick whatever the number of issues and options."""


def _packages(issues: dict[str, list[str]], own: Sheet) -> list[dict[str, str]]:
    """The packages the strategy weighs: every package of a small table; of a larger one, its own best, each package
    one option away from it, and the chain that gives up options one at a time, the cheapest to it first."""
    if math.prod(len(o) for o in issues.values()) <= ENUMERATED:
        return [dict(zip(issues, combo, strict=True)) for combo in itertools.product(*issues.values())]
    best = {i: max(options, key=lambda o: own[i][o]) for i, options in issues.items()}
    swaps = sorted(((own[i][best[i]] - own[i][o], i, o) for i, options in issues.items() for o in options
                    if o != best[i]), key=lambda s: s[0])
    chain, deal = [], dict(best)
    for _, issue, option in swaps:
        deal = deal | {issue: option}
        chain.append(deal)
    return [best, *(best | {i: o} for _, i, o in swaps), *chain]


def respond(system: str, messages: list[dict[str, str]], params: Mapping[str, Any]) -> str:  # free-form: the strategy block as written, read as Params
    """One reply in the game's fenced-JSON protocol."""
    read = Params.model_validate(params)
    me = find_match(_ME, system.split("=== PRIVATE", 1)[1])[1]
    issues = {line[2:].split(": ")[0]: line[2:].split(": ")[1].split(", ")
              for line in find_match(_ISSUES, system)[1].strip().splitlines()}
    own = _sheet(find_match(_OWN, system)[1])
    threshold = float(find_match(_THRESHOLD, system)[1])
    public = system.split("=== PRIVATE", 1)[0]
    others = {name: (float(t), _sheet(block)) for name, t, block in _PUBLIC.findall(public) if name != me}
    user = public_record(messages)
    round_, rounds = (int(x) for x in find_match(_ROUND, user).groups())
    table = set(find_match(_TABLE, user)[1].split(", "))
    offers = _live(user)

    packages = _packages(issues, own)
    best = sum(max(own[i][o] for o in options) for i, options in issues.items())
    margin = read.margin
    last = round_ == rounds
    goal = target(best, threshold + margin, (round_ - 1) / max(rounds - 1, 1), read.concession_exponent())
    bar = threshold + margin if last else max(goal, threshold + margin)

    def score(deal: dict[str, str]) -> float:
        return _points(own, deal)

    open_ = [o for o in offers if me not in o.supporters and score(o.deal) >= bar]
    if open_:
        pick = max(open_, key=lambda o: (len(o.supporters), score(o.deal)))
        return _reply("accept", pick.offer_id, None, f"{pick.offer_id} works for me; I accept.",
                      f"aim {bar:.1f}; {pick.offer_id} gives me {score(pick.deal):.1f}")

    def appeal(deal: dict[str, str]) -> tuple:
        """How well a package suits the table: others clearing their bars, then their points."""
        if others:
            clear = sum(_points(s, deal) >= t for name, (t, s) in others.items() if name in table)
            return clear, sum(_points(s, deal) for name, (t, s) in others.items() if name in table), score(deal)
        overlap = sum(len(o.supporters) * sum(deal[i] == o.deal[i] for i in deal) for o in offers)
        return overlap, -score(deal)

    choices = [p for p in packages if score(p) >= max(goal, threshold + margin)]
    if not choices:  # no package reaches the threshold: no deal is better than any deal
        return _reply("walk", None, None, "No package here works for me.", f"best {best:.1f} < {threshold:.1f}")
    deal = max(choices, key=appeal)
    same = next((o for o in offers if o.deal == deal), None)
    if same is not None:
        return _reply("none", None, None, f"I still back {same.offer_id}.", f"aim {goal:.1f}; waiting on {same.offer_id}")
    return _reply("propose", None, deal, "Here is a package I can support.",
                  f"aim {goal:.1f}; this package gives me {score(deal):.1f}")


def _reply(action: str, offer_id: str | None, deal: dict[str, str] | None, message: str, scratchpad: str) -> str:
    obj: dict[str, Any] = {"scratchpad": scratchpad, "message": message, "action": action}  # free-form: a JSON reply as sent (the strategy's reply text)
    if deal is not None:
        obj["deal"] = deal
    if offer_id is not None:
        obj["offer_id"] = offer_id
    return f"```json\n{json.dumps(obj)}\n```"
