"""How many replicate blocks a contrast needs, sized from a pilot's own seed-clustered variance.

A contrast ``A-B`` names two sides, each a set of cells (a cell as the report has it: game, condition,
pairing, assignment, first speaker): one cell by its name, or every cell with one value of a design factor
(``condition=explicit_objective``, ``pairing=BL``, ``a2``). Every cell of a block plays the block's seed
(common random numbers), so the contrast is paired on the seeds both sides played: at seed s,
``d_s = A_s - B_s``, a side's figure at s being the mean of its cells' seed means (the report's estimate
is the mean of seed means too). The pilot's percentile bootstrap over seeds (``analysis.bootstrap``, as the
report computes it) gives the interval [lo, hi] of the mean of d over the pilot's n seeds; its width is
read as a normal interval's, so the SD of d between seeds is ``sqrt(n) (hi - lo) / (2 z)``. With m blocks
the half-width is then ``z sd / sqrt(m)``: a target half-width h needs ``m = ceil((z sd / h)^2)``, and an
effect D found with power P at the same two-sided level needs ``m = ceil(((z + z_P) sd / D)^2)``.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Any

import polars as pl
from pydantic import BaseModel, ConfigDict

from bargain_ray.analysis.bootstrap import Bootstrap
from bargain_ray.analysis.build import DEFAULT_BY
from bargain_ray.analysis.per_game import metric_columns, metrics_per_game
from bargain_ray.analysis.sweep import Sweep

FACTORS = ("cell", *DEFAULT_BY)
"""What a side of a contrast may name: a cell's name, or a value of one design factor."""
MIN_BLOCKS = 2
"""The fewest blocks with a between-seed variance (and a bootstrap interval)."""


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
    low: float
    high: float
    level: float
    resamples: int

    @property
    def z(self) -> float:
        return z_of(self.level)

    @property
    def sd(self) -> float:
        """The SD of the paired difference between seeds, from the bootstrap interval's width."""
        return math.sqrt(self.seeds) * (self.high - self.low) / (2 * self.z)

    def halfwidth(self, blocks: int) -> float:
        """The half-width of the interval of the mean difference with ``blocks`` blocks."""
        return self.z * self.sd / math.sqrt(blocks)

    def blocks_for_halfwidth(self, halfwidth: float) -> int:
        return needed((self.z * self.sd / halfwidth) ** 2)

    def blocks_for_effect(self, effect: float, power: float) -> int:
        return needed(((self.z + z_of(2 * power - 1)) * self.sd / abs(effect)) ** 2)


def z_of(level: float) -> float:
    """The two-sided normal quantile of ``level`` (1.96 for 0.95); ``z_of(2 P - 1)`` is the one-sided z_P."""
    return NormalDist().inv_cdf(0.5 + level / 2)


def needed(blocks: float) -> int:
    """Rounded up, and never fewer than a variance needs; a hair of float error is not a block."""
    return max(MIN_BLOCKS, math.ceil(blocks - 1e-9))


def read_pilot(sweep: Sweep, metric: str, contrast: str, level: float, resamples: int, seed: int = 0) -> Pilot:
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
    low, high = Bootstrap(resamples, level, seed).interval(diff)
    pilot = Pilot(metric=metric, a=a, b=b, blocks=blocks, seeds=len(diff),
                  dropped=len(set(side_a["seed"]) ^ set(side_b["seed"])), mean=float(diff.mean()),
                  low=low, high=high, level=level, resamples=resamples)
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
