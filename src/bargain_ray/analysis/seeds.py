"""Estimates clustered by seed: every figure averaged within seed, then over seeds, with ``analysis.intervals``.

Games that share a seed share their random draws (common random numbers), so they are not independent; the
seed is the cluster. Every estimate is the mean of per-seed means. Paired differences between two cells use the
seeds both cells played.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

import numpy as np
import polars as pl

from bargain_ray.analysis.intervals import LEVEL, interval


class SeedMeans:
    """Each metric averaged within (cell, seed): the only state an estimate needs.

    One lazy group-by over the per-game table; its size is cells x seeds, whatever the number of
    games, and no long (game x metric) table is built.
    """

    def __init__(self, per_game: pl.DataFrame | pl.LazyFrame, by: list[str], metrics: list[str]) -> None:
        self.by, self.metrics = by, metrics
        wide = (  # the columns it reads, then grouped in memory (the streaming engine's group-by held more)
            per_game.lazy().select(*by, "seed", *metrics).collect()
            .group_by([*by, "seed"])
            .agg(*(pl.col(m).cast(pl.Float64).mean().alias(m) for m in metrics),
                 *(pl.col(m).count().alias(f"{m}\0n") for m in metrics))
            .sort([*by, "seed"], nulls_last=True)
        )
        cells = wide.select(by).unique(maintain_order=True)
        self.cells = [tuple(r) for r in cells.iter_rows()]
        index = {cell: i for i, cell in enumerate(self.cells)}
        self.cell_of_row = np.array([index[tuple(r)] for r in wide.select(by).iter_rows()], dtype=np.int64)
        self.seed_of_row = wide["seed"].to_numpy()
        self.values = {m: wide[m].to_numpy().astype(float) for m in metrics}
        self.counts = {m: wide[f"{m}\0n"].to_numpy() for m in metrics}
        self.starts = np.searchsorted(self.cell_of_row, np.arange(len(self.cells) + 1))

    def of(self, cell: int, metric: str) -> tuple[np.ndarray, np.ndarray, int]:
        """(seeds, seed means, games) of one cell and metric, seeds without a value left out."""
        lo, hi = self.starts[cell], self.starts[cell + 1]
        values = self.values[metric][lo:hi]
        keep = ~np.isnan(values)
        return self.seed_of_row[lo:hi][keep], values[keep], int(self.counts[metric][lo:hi].sum())


def by_cell(per_game: pl.DataFrame | pl.LazyFrame, by: list[str], metrics: list[str],
            level: float = LEVEL) -> pl.DataFrame:
    """One row per cell and metric: games, seeds, mean of seed means and its interval (none below the minimum)."""
    means = SeedMeans(per_game, by, metrics)
    rows = []
    for i, cell in enumerate(means.cells):
        for metric in metrics:
            _, values, games = means.of(i, metric)
            if len(values):
                low, high = interval(values, level)
                rows.append(dict(zip(by, cell, strict=True)) | {
                    "metric": metric, "n_games": games, "n_seeds": len(values), "mean": float(values.mean()),
                    "ci_low": low, "ci_high": high})
    return _frame(rows, [*by, "metric", "n_games", "n_seeds", "mean", "ci_low", "ci_high"], per_game, by)


def paired(per_game: pl.DataFrame | pl.LazyFrame, by: list[str], metrics: list[str],
           level: float = LEVEL) -> pl.DataFrame:
    """Differences a - b between cells that differ in exactly one grouping column, on common seeds."""
    means = SeedMeans(per_game, by, metrics)
    order = sorted(range(len(means.cells)), key=lambda i: _sort_key(means.cells[i]))
    rows = []
    for ia, ib in combinations(order, 2):
        a, b = means.cells[ia], means.cells[ib]
        changed = [c for c, x, y in zip(by, a, b, strict=True) if x != y]
        if len(changed) != 1:
            continue
        for metric in metrics:
            seeds_a, values_a, _ = means.of(ia, metric)
            seeds_b, values_b, _ = means.of(ib, metric)
            common, at_a, at_b = np.intersect1d(seeds_a, seeds_b, assume_unique=True, return_indices=True)
            if not len(common):
                continue
            diff = values_a[at_a] - values_b[at_b]
            low, high = interval(diff, level)
            rows.append(
                {c: v for c, v in zip(by, a, strict=True) if c not in changed}
                | {"factor": changed[0], "a": _text(a[by.index(changed[0])]), "b": _text(b[by.index(changed[0])]),
                   "metric": metric, "n_seeds": len(diff), "mean_diff": float(diff.mean()), "ci_low": low,
                   "ci_high": high}
            )
    cols = [*by, "factor", "a", "b", "metric", "n_seeds", "mean_diff", "ci_low", "ci_high"]
    return _frame(rows, cols, per_game, by)


def _text(v: Any) -> str | None:
    return None if v is None else str(v)


def _sort_key(cell: tuple) -> tuple:
    return tuple((v is None, str(v)) for v in cell)


def _schema(cols: list[str], per_game: pl.DataFrame | pl.LazyFrame, by: list[str]) -> pl.Schema:
    """The output columns' types, the grouping columns keeping theirs even when there are no rows."""
    source = per_game.lazy().collect_schema()
    schema = {c: source[c] for c in by} | {
        "metric": pl.String, "factor": pl.String, "a": pl.String, "b": pl.String,
        "n_games": pl.Int64, "n_seeds": pl.Int64, "mean": pl.Float64, "mean_diff": pl.Float64,
        "ci_low": pl.Float64, "ci_high": pl.Float64,
    }
    return pl.Schema({c: schema[c] for c in cols})


def _frame(rows: list[dict], cols: list[str], per_game: pl.DataFrame | pl.LazyFrame, by: list[str]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=_schema(cols, per_game, by))
