"""The agreement space of a two-party multi-issue game, computed exactly.

With linear additive scores over continuous ranges, the set of reachable
(utility, utility) pairs is a zonotope: the sum of one segment per term. Its
Pareto frontier is the chain that starts at the first role's best corner and
hands terms to the second role in order of how much the second role gains per
point the first role gives up. Every vertex is an exact fraction; distances
are exact squared and rounded only when taken as square roots.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import cache

from bargain_ray.core.figures import Figure
from bargain_ray.core.records import Scalar
from bargain_ray.games.kit.space import OutcomeSpace, Point
from bargain_ray.games.multi_issue.config import MultiIssueConfig, exact
from bargain_ray.games.multi_issue.scoring import fallback, utility


def space(config: MultiIssueConfig) -> OutcomeSpace:
    """The exact agreement space of ``config`` (first role on x), computed once per process."""
    return _space(config.model_dump_json())


@cache
def _space(key: str) -> OutcomeSpace:
    config = MultiIssueConfig.model_validate_json(key)
    first, second = roles = tuple(config.roles)
    low = {t.name: exact(t.min) for t in config.terms}

    def at(terms: dict[str, Fraction]) -> Point:
        return utility(config, first, terms), utility(config, second, terms)

    base = at(low)
    steps = {}
    for t in config.terms:
        moved = at(low | {t.name: exact(t.max)})
        steps[t.name] = (moved[0] - base[0], moved[1] - base[1])
    # start where the first role does best (ties go to the second role)
    start = {}
    for t in config.terms:
        d1, d2 = steps[t.name]
        start[t.name] = exact(t.max) if d1 > 0 or (d1 == 0 and d2 > 0) else exact(t.min)
    trades = []
    for t in config.terms:
        d1, d2 = steps[t.name]
        if d1 != 0 and d1 * d2 < 0:
            trades.append((abs(d2) / abs(d1), t.name))
    trades.sort(key=lambda x: x[0], reverse=True)
    vertices = [at(start)]
    terms = dict(start)
    for _, name in trades:
        t = next(x for x in config.terms if x.name == name)
        terms[name] = exact(t.min) if terms[name] == exact(t.max) else exact(t.max)
        vertices.append(at(terms))
    frontier = tuple(_dedupe(vertices))
    d = (fallback(config, first), fallback(config, second))
    ranges = tuple(
        (sum(min(Fraction(0), s[i]) for s in steps.values()) + base[i],
         sum(max(Fraction(0), s[i]) for s in steps.values()) + base[i])
        for i in (0, 1)
    )
    rational = _rational(frontier, d)
    return OutcomeSpace(
        roles=roles, frontier=frontier, rational=tuple(rational), disagreement=d, nash=_nash(rational, d),
        max_welfare=_max_welfare(frontier), ranges=ranges,
        ks_rational=_kalai_smorodinsky(rational, d, _rational_ideal(rational)),
        ks_outcomes=_kalai_smorodinsky(rational, d, (ranges[0][1], ranges[1][1])),
        kalai=_max_min_gain(rational, d, (Fraction(1), Fraction(1))),
    )


def _dedupe(points: list[Point]) -> list[Point]:
    out: list[Point] = []
    for p in points:
        if not out or out[-1] != p:
            out.append(p)
    return out


def _segments(points: tuple[Point, ...]) -> list[tuple[Point, Point]]:
    return [(points[0], points[0])] if len(points) == 1 else list(zip(points, points[1:], strict=False))


def rational_frontier(s: OutcomeSpace) -> list[tuple[Point, Point]]:
    """The parts of the frontier where both roles get at least their no-agreement points (the zone of agreement's
    edge)."""
    return _rational(s.frontier, s.disagreement)


def _rational(frontier: tuple[Point, ...], d: Point) -> list[tuple[Point, Point]]:
    """The parts of the frontier's segments where both roles get at least their no-agreement points, exactly
    (negmas' frontier keeps only rational outcomes too)."""
    out: list[tuple[Point, Point]] = []
    for a, b in _segments(frontier):
        g = (a[0] - d[0], a[1] - d[1])
        v = (b[0] - a[0], b[1] - a[1])
        lo, hi = Fraction(0), Fraction(1)
        for gi, vi in zip(g, v, strict=True):  # keep both gains >= 0 along the segment
            if vi == 0:
                if gi < 0:
                    lo, hi = Fraction(1), Fraction(0)
            elif vi > 0:
                lo = max(lo, -gi / vi)
            else:
                hi = min(hi, -gi / vi)
        if lo <= hi:
            out.append(((a[0] + lo * v[0], a[1] + lo * v[1]), (a[0] + hi * v[0], a[1] + hi * v[1])))
    return out


def _nash(rational: list[tuple[Point, Point]], d: Point) -> Point | None:
    """The rational frontier point maximising the product of gains over the disagreement point."""
    best: tuple[Fraction, Point] | None = None
    for a, b in rational:
        g = (a[0] - d[0], a[1] - d[1])
        v = (b[0] - a[0], b[1] - a[1])
        quad, lin = v[0] * v[1], g[0] * v[1] + g[1] * v[0]
        candidates = [Fraction(0), Fraction(1)] + ([min(max(-lin / (2 * quad), Fraction(0)), Fraction(1))]
                                                  if quad < 0 else [])
        for lam in candidates:
            point = (a[0] + lam * v[0], a[1] + lam * v[1])
            product = (point[0] - d[0]) * (point[1] - d[1])
            if best is None or product > best[0]:
                best = (product, point)
    return None if best is None else best[1]


def _max_min_gain(rational: list[tuple[Point, Point]], d: Point, scale: Point) -> Point | None:
    """The rational frontier point maximising the smaller of the two gains, each divided by its ``scale``.

    On a segment the smaller of two linear functions peaks at an end or where they cross, so the
    candidates are exact; the first best point along the frontier is kept (from the first role's best end).
    """
    best: tuple[Fraction, Point] | None = None
    for a, b in rational:
        f0 = ((a[0] - d[0]) / scale[0], (a[1] - d[1]) / scale[1])  # scaled gains at a
        slope = ((b[0] - a[0]) / scale[0], (b[1] - a[1]) / scale[1])
        candidates = [Fraction(0), Fraction(1)]
        if slope[0] != slope[1]:
            cross = (f0[1] - f0[0]) / (slope[0] - slope[1])
            if 0 <= cross <= 1:
                candidates.append(cross)
        for lam in candidates:
            value = min(f0[0] + lam * slope[0], f0[1] + lam * slope[1])
            if best is None or value > best[0]:
                best = (value, (a[0] + lam * (b[0] - a[0]), a[1] + lam * (b[1] - a[1])))
    return None if best is None else best[1]


def _rational_ideal(rational: list[tuple[Point, Point]]) -> Point | None:
    """Each role's best utility over the individually rational deals."""
    ends = [p for seg in rational for p in seg]
    return (max(p[0] for p in ends), max(p[1] for p in ends)) if ends else None


def _kalai_smorodinsky(rational: list[tuple[Point, Point]], d: Point, ideal: Point | None) -> Point | None:
    """Kalai and Smorodinsky's point for an ``ideal``: the rational frontier point maximising the smaller share of
    each role's ideal gain (gains in proportion to the ideal's, where the frontier reaches that line)."""
    if ideal is None or not rational:
        return None
    scale = (ideal[0] - d[0], ideal[1] - d[1])
    if scale[0] <= 0 or scale[1] <= 0:
        return None
    return _max_min_gain(rational, d, scale)


def _max_welfare(frontier: tuple[Point, ...]) -> tuple[Point, ...]:
    """The frontier vertices with the highest joint utility (a segment if two adjoin)."""
    top = max(p[0] + p[1] for p in frontier)
    return tuple(p for p in frontier if p[0] + p[1] == top)


def _distance2(p: Point, a: Point, b: Point) -> Fraction:
    """Exact squared distance from ``p`` to the segment ``a``-``b``."""
    v = (b[0] - a[0], b[1] - a[1])
    w = (p[0] - a[0], p[1] - a[1])
    length2 = v[0] ** 2 + v[1] ** 2
    lam = Fraction(0) if length2 == 0 else min(max((w[0] * v[0] + w[1] * v[1]) / length2, Fraction(0)), Fraction(1))
    dx, dy = w[0] - lam * v[0], w[1] - lam * v[1]
    return dx * dx + dy * dy


def distances(s: OutcomeSpace, point: Point) -> dict[str, Scalar]:
    """A deal's distances to the frontier and the solution points, and its optimalities in negmas' form
    (``negmas.preferences.ops.calc_outcome_optimality``): ``<point>_optimality`` is 1 - distance / the utility
    box's diagonal; ``max_welfare_optimality`` is the deal's joint utility / the best joint utility (a ratio of
    welfare, not a distance, as negmas has it since its ``OutcomeDistances.max_welfare`` is ``sum(utils)``).

    The frontier comes in two variants: ``pareto`` is the distance to the whole frontier (ours: 0 for every
    Pareto-optimal deal, one that leaves a role below its no-agreement points included); ``pareto_rational`` is the
    distance to its rational part only, as negmas' ``pareto_optimality`` measures it. They differ for a deal below
    a fallback."""
    to_frontier = min(_distance2(point, a, b) for a, b in _segments(s.frontier))
    to_rational = min((_distance2(point, a, b) for a, b in s.rational), default=None)
    to_welfare = min(_distance2(point, a, b) for a, b in _segments(s.max_welfare))
    out: dict[str, Scalar] = {"pareto_optimal": to_frontier == 0}
    squared = {"pareto": to_frontier, "pareto_rational": to_rational} | {
        name: None if target is None else _distance2(point, target, target)
        for name, target in (("nash", s.nash), ("ks_rational", s.ks_rational), ("ks_outcomes", s.ks_outcomes),
                             ("kalai", s.kalai))
    }
    for name, d2 in squared.items():
        d = None if d2 is None else math.sqrt(d2)
        out[f"dist_{name}"] = d
        out[f"{name}_optimality"] = None if d is None else 1 - d / s.max_distance
    out["dist_max_welfare"] = math.sqrt(to_welfare)
    best = s.best_welfare
    out["max_welfare_optimality"] = float((point[0] + point[1]) / best) if best > 0 else None
    return out


def deal_distances(s: OutcomeSpace, utilities: dict[str, Figure]) -> dict[str, Scalar]:
    """``distances`` of a deal, read from the exact utilities its outcome record gives each role."""
    return distances(s, (utilities[s.roles[0]].fraction, utilities[s.roles[1]].fraction))
