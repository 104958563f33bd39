"""Every derived table of a sweep, computed once and shared by the export and the report.

The per-game and per-turn tables stay lazy (scans of the sweep's parquet files); only the
aggregates (cells, paired differences, operational figures) are held, so memory grows with
the number of cells, not of games.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from bargain_ray.analysis.bootstrap import LEVEL, RESAMPLES, Bootstrap, by_cell, paired
from bargain_ray.analysis.families import with_derived
from bargain_ray.analysis.operational import operational
from bargain_ray.analysis.per_game import in_design_order, metric_columns, metrics_per_game, metrics_per_turn
from bargain_ray.analysis.rehearsal import Rehearsal, rehearsal_of
from bargain_ray.analysis.sweep import Sweep
from bargain_ray.store.sim_runs import read_reply_noise

DEFAULT_BY = ("game", "condition", "pairing", "assignment", "first_speaker")
"""A cell: condition x pairing x assignment x first speaker, within one game."""


@dataclass(frozen=True)
class Analysis:
    sweep: Sweep
    by: list[str]
    resamples: int
    level: float
    seed: int
    rehearsal: Rehearsal
    scan_per_game: pl.LazyFrame
    scan_per_turn: pl.LazyFrame
    by_cell: pl.DataFrame
    paired: pl.DataFrame
    operational: pl.DataFrame

    @property
    def per_game(self) -> pl.DataFrame:
        """The per-game table in memory (for small sweeps and tests; analysis itself scans)."""
        return in_design_order(self.scan_per_game).collect()

    def bootstrap(self) -> Bootstrap:
        """A fresh generator seeded as this analysis was, for estimates beyond the cells (the same every build)."""
        return Bootstrap(self.resamples, self.level, self.seed)


def analyse(
    sweep: Sweep, by: list[str] | None = None, resamples: int = RESAMPLES, level: float = LEVEL, seed: int = 0
) -> Analysis:
    """Per-game metrics (with the figures each family derives), cells with seed-clustered bootstrap CIs over known
    games, operational figures."""
    by = list(by or DEFAULT_BY)
    per_game = with_derived(metrics_per_game(sweep))
    schema = per_game.collect_schema()
    unknown = [c for c in by if c not in schema]
    if unknown:
        raise ValueError(f"cannot group by {unknown}: per-game columns are {schema.names()}")
    known = per_game.filter(pl.col("known"))
    metrics = [m for m in metric_columns(schema) if m != "technical_failure"]
    boot = Bootstrap(resamples, level, seed)
    return Analysis(
        sweep=sweep, by=by, resamples=resamples, level=level, seed=seed,
        rehearsal=rehearsal_of(sweep.manifest, sweep.scan("calls"), read_reply_noise(sweep.path)),
        scan_per_game=per_game,
        scan_per_turn=metrics_per_turn(sweep),
        by_cell=by_cell(known, by, metrics, boot),
        paired=paired(known, by, metrics, boot),
        operational=operational(sweep),
    )
