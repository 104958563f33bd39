"""How many replicate blocks a contrast needs, sized from a pilot's own seed-clustered variance and its uncertainty.

A contrast ``A-B`` names two sides, each a set of cells (a cell as the report has it: game, condition,
pairing, assignment, first speaker): one cell by its name, or every cell with one value of a design factor
(``condition=explicit_objective``, ``pairing=BL``, ``a2``). Every cell of a block plays the block's seed
(common random numbers), so the contrast is paired on the seeds both sides played: at seed s,
``d_s = A_s - B_s``, a side's figure at s being the mean of its cells' seed means (the report's estimate
is the mean of seed means too). The report's interval of mean(d) over m seeds is ``t(m - 1) S_m / sqrt(m)``
(``analysis.intervals``), S_m the SD of d over those seeds, a random figure of the sweep itself.

The pilot's SD s is itself an estimate from its n seeds: planning on it as if it were the true SD reaches the target
about half the time. The plan (ours) grows the pilot's own folder to m blocks (its n seeds and m - n new ones), so
``(m - 1) S_m^2 = (n - 1) s^2 + sigma^2 X``, X a chi-square with m - n degrees of freedom, and what the pilot knows
of sigma is ``sigma^2 = (n - 1) s^2 / Y``, Y a chi-square with n - 1 (the fiducial distribution of a normal SD).
X / Y is an F ratio scaled by (m - n) / (n - 1), so the probability that the grown sweep reaches a half-width h is
exact under normal d: the plan is the fewest blocks whose probability is at least the assurance asked (0.8). An
effect D is planned on the power averaged over the same distribution of sigma.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import polars as pl
from pydantic import BaseModel, ConfigDict
from scipy import stats

from bargain_ray.analysis.build import DEFAULT_BY
from bargain_ray.analysis.intervals import MIN_SEEDS, interval, t_quantile
from bargain_ray.analysis.per_game import metric_columns, metrics_per_game
from bargain_ray.analysis.sweep import Sweep

FACTORS = ("cell", *DEFAULT_BY)
"""What a side of a contrast may name: a cell's name, or a value of one design factor."""
MIN_BLOCKS = 2
"""The fewest pilot seeds with a between-seed variance."""
MAX_BLOCKS = 100_000
"""The most blocks a plan searches (a target beyond it is refused, naming what it would need)."""
SIGMA_POINTS = 400
"""Equal-probability points of the SD's distribution that the power is averaged over."""


class PlanError(ValueError):
    """A pilot, metric or contrast that cannot be planned from: one line saying what to do."""


class Side(BaseModel):
    """One side of a contrast: the factor and value it names, the factor's values it matched, its cells."""

    model_config = ConfigDict(frozen=True)

    factor: str
    value: str
    matched: list[str]
    cells: list[str]

    @property
    def where(self) -> pl.Expr:
        return pl.col(self.factor).cast(pl.String).is_in(self.matched)

    @property
    def text(self) -> str:
        if self.factor == "cell":
            return f"cell {self.value}"
        return f"{self.factor} {self.value}: {len(self.cells)} cell{'s' * (len(self.cells) > 1)} ({', '.join(self.cells)})"


class Pilot(BaseModel):
    """What a pilot says of one metric's contrast: the paired difference per seed, summarised."""

    model_config = ConfigDict(frozen=True)

    metric: str
    a: Side
    b: Side
    blocks: int
    """Replicate blocks of the pilot's design."""
    seeds: int
    """Seeds both sides have a figure for: the pairs."""
    dropped: int
    """Seeds only one side has a figure for (a technical failure, or a metric's empty denominator)."""
    mean: float
    sd: float
    """The SD of the paired difference between the pilot's seeds (n - 1 in the denominator)."""
    low: float | None
    high: float | None
    """The report's interval of the mean difference (none below the minimum of seeds)."""
    level: float

    def t(self, blocks: int) -> float:
        return float(t_quantile(self.level, blocks - 1))

    def halfwidth(self, blocks: int) -> float:
        """The half-width of ``blocks`` blocks were their SD the pilot's."""
        return self.t(blocks) * self.sd / math.sqrt(blocks)

    def reach(self, blocks: int, halfwidth: float) -> float:
        """The probability that the pilot's folder grown to ``blocks`` blocks has a half-width of at most
        ``halfwidth``, given what the pilot's seeds know of the SD (module docstring)."""
        n, m = self.seeds, max(blocks, self.seeds)
        bound = (m - 1) * (halfwidth * math.sqrt(m) / self.t(m)) ** 2  # the largest (m - 1) S_m^2 that reaches it
        if m == n:
            return float((n - 1) * self.sd ** 2 <= bound)
        ratio = (bound / ((n - 1) * self.sd ** 2) - 1) * (n - 1) / (m - n)
        return float(stats.f.cdf(ratio, m - n, n - 1)) if ratio > 0 else 0.0

    def power(self, blocks: int, effect: float) -> float:
        """The chance that ``blocks`` blocks' interval excludes zero when the difference is ``effect``, averaged
        over what the pilot's seeds know of the SD (the noncentral t of each SD, weighted alike); the blocks are
        counted as a fresh sample (the grown folder's pilot blocks add what they measured, not a new draw)."""
        n = self.seeds
        q = stats.chi2.ppf((np.arange(SIGMA_POINTS) + 0.5) / SIGMA_POINTS, n - 1)
        sigma = self.sd * np.sqrt((n - 1) / q)
        shift = abs(effect) * math.sqrt(blocks) / sigma
        t = self.t(blocks)
        found = stats.nct.sf(t, blocks - 1, shift) + stats.nct.cdf(-t, blocks - 1, shift)
        return float(np.mean(found))

    def blocks_for_halfwidth(self, halfwidth: float, assurance: float) -> int:
        return fewest(lambda m: self.reach(m, halfwidth) >= assurance, self.least)

    def blocks_if_known(self, halfwidth: float) -> int:
        """The blocks that reach ``halfwidth`` were the SD exactly the pilot's (what planning on it as known gives)."""
        return fewest(lambda m: self.halfwidth(m) <= halfwidth, self.least)

    def blocks_for_effect(self, effect: float, power: float) -> int:
        return fewest(lambda m: self.power(m, effect) >= power, self.least)

    @property
    def least(self) -> int:
        """The fewest blocks a plan gives: the pilot's own, and never fewer than an interval needs."""
        return max(self.blocks, MIN_SEEDS)


def fewest(enough: Callable[[int], bool], least: int) -> int:
    """The fewest blocks from ``least`` on for which ``enough(blocks)`` holds (it holds from some count on)."""
    if enough(least):
        return least
    high = least
    while not enough(high):
        if high >= MAX_BLOCKS:
            raise PlanError(f"the goal needs more than {MAX_BLOCKS} blocks: ask for a wider half-width or a larger "
                            "effect")
        high = min(2 * high, MAX_BLOCKS)
    low = high // 2 if high > least else least  # enough(low) is false, enough(high) true
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if enough(mid) else (mid, high)
    return high


def read_pilot(sweep: Sweep, metric: str, contrast: str, level: float) -> Pilot:
    """The paired contrast ``A-B`` of ``metric`` over the pilot's known games, or PlanError saying why not."""
    blocks = sweep.manifest.config.grid.blocks
    if blocks < MIN_BLOCKS:
        raise PlanError(f"{sweep.path} is a pilot of {blocks} block: a between-seed variance needs at least "
                        f"{MIN_BLOCKS}; run it again with grid.blocks={MIN_BLOCKS} or more")
    games = metrics_per_game(sweep)
    known = [m for m in metric_columns(games.collect_schema()) if m != "technical_failure"]
    if metric not in known:
        raise PlanError(f"no metric {metric!r} in {sweep.path}; known: {', '.join(known)}")
    frame = games.filter(pl.col("known")).select(*FACTORS, "seed", pl.col(metric).cast(pl.Float64)).collect()
    a, b = split_contrast(frame, contrast)
    side_a, side_b = side_means(frame, a, metric), side_means(frame, b, metric)
    pairs = side_a.join(side_b, on="seed", how="inner", suffix="_b")
    if pairs.height < MIN_BLOCKS:
        raise PlanError(f"{a.value} and {b.value} share {pairs.height} seed(s) with a {metric} figure: "
                        f"a paired variance needs at least {MIN_BLOCKS}")
    diff = (pairs[metric] - pairs[f"{metric}_b"]).to_numpy()
    low, high = interval(diff, level)
    pilot = Pilot(metric=metric, a=a, b=b, blocks=blocks, seeds=len(diff),
                  dropped=len(set(side_a["seed"]) ^ set(side_b["seed"])), mean=float(diff.mean()),
                  sd=float(diff.std(ddof=1)), low=low, high=high, level=level)
    if pilot.sd == 0:
        raise PlanError(
            f"{metric} differs by exactly {pilot.mean:g} between {a.value} and {b.value} at every one of the "
            f"pilot's {pilot.seeds} seeds: zero variance, nothing to size blocks from. Strategy agents and the "
            f"simulated provider (provider=sim) reply alike for a seed, so a rehearsal's contrast often has no "
            f"spread: plan from a pilot on the real models, or from a metric the seeds move")
    return pilot


def split_contrast(frame: pl.DataFrame, contrast: str) -> tuple[Side, Side]:
    """The two sides ``A-B`` names: the one split at a ``-`` where both halves name cells of the pilot."""
    cuts = [i for i, ch in enumerate(contrast) if ch == "-"]
    found = [(a, b) for i in cuts if (a := side(frame, contrast[:i])) and (b := side(frame, contrast[i + 1:]))]
    if len(found) > 1:
        raise PlanError(f"contrast {contrast!r} splits into two sides in {len(found)} ways; name each side as "
                        "factor=value (e.g. condition=x-condition=y)")
    if not found:
        raise PlanError(f"contrast {contrast!r} names no cells of the pilot on one side or both; write A-B, each "
                        f"side a cell or a value of one factor (factor=value where two factors share it): "
                        f"{known_values(frame)}")
    a, b = found[0]
    if a.factor != b.factor or a.value == b.value:
        raise PlanError(f"contrast {contrast!r}: A and B must be two values of one factor (or two cells), "
                        f"not {a.factor} {a.value} and {b.factor} {b.value}")
    return a, b


def side(frame: pl.DataFrame, text: str) -> Side | None:
    """The cells ``text`` names (``factor=value``, or a value of one factor), None when it names none."""
    factor, sep, value = text.partition("=")
    factors, value = ([factor], value) if sep and factor in FACTORS else (list(FACTORS), text)
    sides = [s for f in factors if (s := named(frame, f, value))]
    if len(sides) > 1:
        raise PlanError(f"{value!r} is a value of {' and '.join(s.factor for s in sides)}: write factor={value}")
    return sides[0] if sides else None


def named(frame: pl.DataFrame, factor: str, value: str) -> Side | None:
    """The side of the cells whose ``factor`` is ``value`` (an assignment as ``a1`` or ``1``), None if none is."""
    matched = sorted({str(v) for v in frame[factor].unique().to_list() if v is not None
                      and value in (label(factor, v), str(v))})
    if not matched:
        return None
    cells = frame.filter(pl.col(factor).cast(pl.String).is_in(matched))["cell"].unique().sort().to_list()
    return Side(factor=factor, value=value, matched=matched, cells=cells)


def label(factor: str, value: Any) -> str:
    """A factor's value as a contrast names it: assignments as ``a1``, the rest as written."""
    return f"a{value}" if factor == "assignment" else str(value)


def known_values(frame: pl.DataFrame) -> str:
    """Every factor with its values, as the refusal of an unknown contrast lists them."""
    return "; ".join(f"{f}: {', '.join(sorted({label(f, v) for v in frame[f].to_list() if v is not None}))}"
                     for f in FACTORS)


def side_means(frame: pl.DataFrame, s: Side, metric: str) -> pl.DataFrame:
    """(seed, figure) of one side: each cell averaged within seed, then the side's cells averaged per seed."""
    return (frame.filter(s.where).group_by([*DEFAULT_BY, "seed"]).agg(pl.col(metric).mean())
            .group_by("seed").agg(pl.col(metric).mean()).drop_nulls().sort("seed"))
