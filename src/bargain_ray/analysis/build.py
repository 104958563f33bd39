"""Every derived table of a sweep, computed once and shared by the export and the report.

The per-game and per-turn tables stay lazy (scans of the sweep's parquet files); only the
aggregates (cells, paired differences, operational figures) are held, so memory grows with
the number of cells, not of games.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from bargain_ray.analysis.families import families, results_of, with_derived
from bargain_ray.analysis.head_to_head import table_of
from bargain_ray.analysis.intervals import LEVEL
from bargain_ray.analysis.operational import operational
from bargain_ray.analysis.per_game import in_design_order, metric_columns, metrics_per_game, metrics_per_turn
from bargain_ray.analysis.rehearsal import Rehearsal, rehearsal_of
from bargain_ray.analysis.seeds import by_cell, paired
from bargain_ray.analysis.sweep import Sweep
from bargain_ray.store.sim_runs import read_reply_noise

DEFAULT_BY = ("game", "condition", "pairing", "assignment", "first_speaker")
"""A cell: condition x pairing x assignment x first speaker, within one game."""


@dataclass(frozen=True)
class Analysis:
    sweep: Sweep
    by: list[str]
    level: float
    rehearsal: Rehearsal
    scan_per_game: pl.LazyFrame
    scan_per_turn: pl.LazyFrame
    by_cell: pl.DataFrame
    paired: pl.DataFrame
    head_to_head: pl.DataFrame
    """Model A - model B in matched cells and the outcome model's effects, adjusted (``analysis.head_to_head``)."""
    operational: pl.DataFrame

    @property
    def per_game(self) -> pl.DataFrame:
        """The per-game table in memory (for small sweeps and tests; analysis itself scans)."""
        return in_design_order(self.scan_per_game).collect()


def analyse(sweep: Sweep, by: list[str] | None = None, level: float = LEVEL) -> Analysis:
    """Per-game metrics (with the figures each family derives), cells with seed-clustered intervals over known
    games (``analysis.intervals``), operational figures."""
    by = list(by or DEFAULT_BY)
    per_game = with_derived(metrics_per_game(sweep))
    schema = per_game.collect_schema()
    unknown = [c for c in by if c not in schema]
    if unknown:
        raise ValueError(f"cannot group by {unknown}: per-game columns are {schema.names()}")
    known = per_game.filter(pl.col("known"))
    metrics = [m for m in metric_columns(schema) if m != "technical_failure"]
    return Analysis(
        sweep=sweep, by=by, level=level,
        rehearsal=rehearsal_of(sweep.manifest, sweep.scan("calls"), read_reply_noise(sweep.path)),
        scan_per_game=per_game,
        scan_per_turn=metrics_per_turn(sweep),
        by_cell=by_cell(known, by, metrics, level),
        paired=paired(known, by, metrics, level),
        head_to_head=table_of(sweep, known, {f: results_of(f) for f in families(known)}, level),
        operational=operational(sweep),
    )
