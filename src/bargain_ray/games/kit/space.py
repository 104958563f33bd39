"""A game's outcome space in exact utility points: the one class of it, for every family that scores a deal against
the deals it could have made.

A point has one coordinate per role, in ``roles`` order, each an exact fraction. A family reaches its space one of
two ways, both exact. Terms that vary continuously (multi-issue) make the reachable points a zonotope, whose Pareto
frontier the family builds as a chain of segments (``frontier``: its vertices, from the first role's best; every
point between two consecutive ones is a deal) with the solution points on it. A finite set of deals (scorable) is
enumerated (``deals``, each one's point in ``points`` as integers over one common denominator ``scale``, so a scan
is integer arithmetic), and a deal is Pareto optimal when no deal is at least as good for every role and better for
one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property

from bargain_ray.games.base import UtilitySpace

Point = tuple[Fraction, ...]


@dataclass(frozen=True)
class OutcomeSpace:
    """The deals of one game config in utility space, and what is known of them exactly."""

    roles: tuple[str, ...]
    disagreement: Point
    """Each role's utility without a deal (its no-agreement points, its threshold)."""
    deals: tuple[dict[str, str], ...] = ()
    """Every deal of an enumerated space, in enumeration order."""
    points: tuple[tuple[int, ...], ...] = ()
    """Each deal's utilities times ``scale``, exactly."""
    scale: int = 1
    frontier: tuple[Point, ...] = ()
    """The Pareto frontier of a continuous space: its vertices, from the first role's best deal."""
    rational: tuple[tuple[Point, Point], ...] = ()
    """The frontier's parts where every role gets at least its utility without a deal, as segments: the frontier
    negmas measures to (its ``pareto_frontier`` keeps rational outcomes only). Empty when no deal is rational."""
    ranges: tuple[tuple[Fraction, Fraction], ...] = ()
    """Each role's (lowest, highest) utility over every deal."""
    max_welfare: tuple[Point, ...] = ()
    """Vertices of the best-joint-utility set on the frontier: one point, or the two ends of a segment."""
    nash: Point | None = None
    """The frontier deal with the largest product of gains over no agreement (None when no deal is rational)."""
    ks_rational: Point | None = None
    """Kalai and Smorodinsky's point with each role's ideal over the individually rational deals (those leaving both
    at or above no agreement: the bargaining set, as textbooks define it): equal shares of each role's best rational
    gain. None when no deal is rational."""
    ks_outcomes: Point | None = None
    """The same with each role's ideal over all outcomes (its best utility of any deal), as negmas' ``ks_points``
    computes it. It equals ``ks_rational`` when each role's best deal leaves the other at or above no agreement."""
    kalai: Point | None = None
    """Kalai's egalitarian point: the largest equal gain over no agreement."""

    @property
    def max_distance(self) -> float:
        """The diagonal of the utility box: distances are normalised by it, as negmas does."""
        return math.hypot(*(float(hi - lo) for lo, hi in self.ranges))

    @property
    def best_welfare(self) -> Fraction:
        """The highest joint utility of a deal on the frontier (negmas' ``max(sum(u) for u in pareto_utils)``)."""
        return sum(self.max_welfare[0], Fraction(0))

    @cached_property
    def feasible(self) -> list[int]:
        """The enumerated deals that leave every role at or above its utility without a deal."""
        bars = [int(d * self.scale) for d in self.disagreement]
        return [k for k, pts in enumerate(self.points) if all(x >= b for x, b in zip(pts, bars, strict=True))]

    def dominated(self, mine: tuple[int, ...]) -> bool:
        """Some enumerated deal is at least as good as ``mine`` (a point of ``points``) for every role and better
        for one."""
        return any(all(a >= b for a, b in zip(pts, mine, strict=True)) and pts != mine for pts in self.points)

    def utility_space(self) -> UtilitySpace:
        """A two-role continuous space as the report's plot draws it (floats)."""
        def floats(points: tuple[Point, ...]) -> list[tuple[float, float]]:
            return [(float(x), float(y)) for x, y in points]

        return UtilitySpace(
            roles=(self.roles[0], self.roles[1]), frontier=floats(self.frontier),
            disagreement=floats((self.disagreement,))[0],
            nash=None if self.nash is None else floats((self.nash,))[0], max_welfare=floats(self.max_welfare),
            ranges=(floats(self.ranges)[0], floats(self.ranges)[1]),
        )
