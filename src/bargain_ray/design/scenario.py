"""What a scenario offers before any call: per game and cell, the zone of agreement (the deals that beat every
side's fallback), the Pareto frontier, the Nash and Kalai points, each side's best and worst deal and what an equal
split gives, from the game's exact outcome space (``games.kit.space``).

A cell whose game no deal can win for every side is refused before Ray starts unless ``run.allow_no_zone=true``
(ours): its games can only end without a deal, which a researcher rarely means to pay for. ``python -m
bargain_ray.check`` prints these lines with an SVG of each frontier; every dry run prints them too.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from bargain_ray.design.resolved import ResolvedSweep
from bargain_ray.games.bargaining.config import BargainingConfig
from bargain_ray.games.base import FamilyConfig
from bargain_ray.games.kit.space import OutcomeSpace, Point
from bargain_ray.games.multi_issue import frontier
from bargain_ray.games.multi_issue.config import MultiIssueConfig
from bargain_ray.games.multi_issue.scoring import utility
from bargain_ray.games.scorable import metrics as scorable
from bargain_ray.games.scorable.config import ScorableConfig

NO_ZONE = "none: no deal beats both fallbacks"


@dataclass(frozen=True)
class CellCheck:
    """The check of one game as one condition plays it."""

    cell: str
    """``game tickets under condition C3``."""
    lines: list[str]
    """What the check says of it, one fact a line."""
    zone: bool | None
    """Whether some deal beats every side's fallback; None for a family without a scored outcome space."""
    space: OutcomeSpace | None = None
    """The two-role continuous space the frontier's SVG draws (multi-issue only)."""


def _n(x: Fraction) -> str:
    return f"{float(x):.4g}"


def _pair(roles: tuple[str, ...], point: Point) -> str:
    return ", ".join(f"{r} {_n(u)}" for r, u in zip(roles, point, strict=True))


def check_cell(cell: str, config: FamilyConfig) -> CellCheck:
    """The check of one game config (as its family's schema reads it)."""
    if isinstance(config, MultiIssueConfig):
        return _multi_issue(cell, config)
    if isinstance(config, ScorableConfig):
        return _scorable(cell, config)
    if isinstance(config, BargainingConfig):
        return _bargaining(cell, config)
    return CellCheck(cell=cell, lines=[f"{config.family}: no scored outcome space to check (talk is judged by an "
                                       "observer)"], zone=None)


def _multi_issue(cell: str, config: MultiIssueConfig) -> CellCheck:
    s = frontier.space(config)
    roles, d = s.roles, s.disagreement
    zone = s.nash is not None and all(u > f for u, f in zip(s.nash, d, strict=True))
    middle = {t.name: (Fraction(str(t.min)) + Fraction(str(t.max))) / 2 for t in config.terms}
    split = tuple(utility(config, r, middle) for r in roles)
    spans = [(min(p[i] for p in s.frontier), max(p[i] for p in s.frontier)) for i in range(len(roles))]
    lines = [f"fallbacks: {_pair(roles, d)}",
             "zone of agreement: " + (_zone(s) if zone else NO_ZONE),
             f"Pareto frontier: {len(s.frontier)} vertices; "
             + "; ".join(f"{r} {_n(lo)} to {_n(hi)}" for r, (lo, hi) in zip(roles, spans, strict=True)),
             f"Nash point: {_pair(roles, s.nash) if s.nash else 'none'}; "
             f"Kalai point: {_pair(roles, s.kalai) if s.kalai else 'none'}",
             "best and worst deal: " + "; ".join(f"{r} {_n(hi)} / {_n(lo)}"
                                                 for r, (lo, hi) in zip(roles, s.ranges, strict=True)),
             f"equal split (every term at the middle of its range): {_pair(roles, split)}"]
    return CellCheck(cell=cell, lines=lines, zone=zone, space=s)


def _zone(s: OutcomeSpace) -> str:
    """Each role's utility from its fallback to the most a deal leaving every other role its fallback gives it."""
    rational = [p for segment in frontier.rational_frontier(s) for p in segment]
    return "; ".join(f"{r} {_n(f)} to {_n(max(p[i] for p in rational))}"
                     for i, (r, f) in enumerate(zip(s.roles, s.disagreement, strict=True)))


def _scorable(cell: str, config: ScorableConfig) -> CellCheck:
    try:
        s = scorable.space(config)
    except scorable.SpaceTooLarge as exc:
        return CellCheck(cell=cell, lines=[f"not checked: {exc}"], zone=None)
    roles = s.roles
    beats = [k for k in s.feasible if all(x > int(f * s.scale) for x, f in zip(s.points[k], s.disagreement,
                                                                                   strict=True))]
    optimal = sum(1 for k in s.feasible if not s.dominated(s.points[k]))
    lines = [f"fallbacks (thresholds): {_pair(roles, s.disagreement)}",
             "zone of agreement: " + (f"{len(beats)} of {len(s.points)} deals beat every party's threshold"
                                      if beats else NO_ZONE.replace("both", "every party's")),
             f"Pareto frontier: {optimal} of the {len(s.feasible)} deals every party can accept are Pareto optimal",
             "best and worst deal: " + "; ".join(
                 f"{r} {_n(Fraction(max(p[i] for p in s.points), s.scale))} / "
                 f"{_n(Fraction(min(p[i] for p in s.points), s.scale))}" for i, r in enumerate(roles)),
             "equal split: none for option lists (ours: options cannot be divided)"]
    return CellCheck(cell=cell, lines=lines, zone=bool(beats))


def _bargaining(cell: str, config: BargainingConfig) -> CellCheck:
    lo, hi = config.valuation_min, config.valuation_max
    values = hi - lo + 1
    overlap = max(lo, config.price_min) < min(hi, config.price_max)
    zone = values > 1 and overlap
    chance = Fraction(values - 1, 2 * values)
    lines = [f"fallbacks: seller and buyer 0 (no trade); valuations drawn per game from {lo} to {hi}",
             "zone of agreement: " + (f"prices between the seller's cost and the buyer's value, within "
                                      f"{config.price_min} to {config.price_max}, in the games whose value exceeds "
                                      f"the cost ({float(chance):.0%} of games)" if zone else NO_ZONE),
             "Pareto frontier: every trade at a price between cost and value (the whole gain is shared)",
             "equal split: the price halfway between cost and value, each side gaining half"]
    return CellCheck(cell=cell, lines=lines, zone=zone)


def no_zone_refusal(checks: list[CellCheck]) -> str | None:
    """The one line refusing cells no deal can win for every side, None when every cell has a zone."""
    empty = [c.cell for c in checks if c.zone is False]
    if not empty:
        return None
    more = f" (and {len(empty) - 1} more)" if len(empty) > 1 else ""
    return (f"{empty[0]}{more}: {NO_ZONE}, so every game can only end without a deal; change the fallbacks or the "
            "weights (python -m bargain_ray.check +grid=NAME shows the space), or run it anyway with "
            "run.allow_no_zone=true")


def check_sweep(sweep: ResolvedSweep) -> list[CellCheck]:
    """The check of every game config the sweep plays, one per game and condition."""
    return [check_cell(cell, config) for cell, config in sweep.game_configs.items()]


def check_lines(checks: list[CellCheck]) -> str:
    """The check as printed: each cell, then its facts indented."""
    return "\n".join(f"check: {c.cell}\n" + "\n".join(f"  {line}" for line in c.lines) for c in checks)
