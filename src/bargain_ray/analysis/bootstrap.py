"""Percentile bootstrap clustered by seed: average within seed, resample seeds.

Games that share a seed share their random draws (common random numbers),
so they are not independent; the seed is the unit of resampling. Every
estimate is the mean of per-seed means. Paired differences between two cells
use the seeds both cells played.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

import numpy as np
import polars as pl

RESAMPLES = 2000
LEVEL = 0.95


class Bootstrap:
    """Seeded resampling, one index matrix per number of seeds (reproducible reports)."""

    def __init__(self, resamples: int = RESAMPLES, level: float = LEVEL, seed: int = 0) -> None:
        self.resamples = resamples
        self.level = level
        self._rng = np.random.default_rng(seed)
        self._index: dict[int, np.ndarray] = {}

    def interval(self, seed_means: np.ndarray) -> tuple[float | None, float | None]:
        """The percentile interval of the mean of ``seed_means`` (None with fewer than two seeds)."""
        n = len(seed_means)
        if n < 2:
            return None, None
        if n not in self._index:
            self._index[n] = self._rng.integers(0, n, size=(self.resamples, n))
        means = seed_means[self._index[n]].mean(axis=1)
        tail = (1 - self.level) / 2 * 100
        lo, hi = np.percentile(means, [tail, 100 - tail])
        return float(lo), float(hi)


def seed_means(per_game: pl.DataFrame, by: list[str], metrics: list[str]) -> pl.DataFrame:
    """Long table (by..., metric, seed, value, games): each metric averaged within seed."""
    frame = per_game.select(*by, "seed", *(pl.col(m).cast(pl.Float64) for m in metrics))
    long = frame.unpivot(index=[*by, "seed"], on=metrics, variable_name="metric", value_name="value")
    return (
        long.drop_nulls("value")
        .group_by([*by, "metric", "seed"])
        .agg(pl.col("value").mean(), pl.len().alias("games"))
        .sort([*by, "metric", "seed"], nulls_last=True)
    )


def by_cell(per_game: pl.DataFrame, by: list[str], metrics: list[str], boot: Bootstrap) -> pl.DataFrame:
    """One row per cell and metric: games, seeds, mean of seed means, percentile CI."""
    grouped = (
        seed_means(per_game, by, metrics)
        .group_by([*by, "metric"], maintain_order=True)
        .agg(pl.col("games").sum().alias("n_games"), pl.len().alias("n_seeds"), pl.col("value"))
    )
    rows = []
    for row in grouped.iter_rows(named=True):
        values = np.asarray(row.pop("value"))
        lo, hi = boot.interval(values)
        rows.append(row | {"mean": float(values.mean()), "ci_low": lo, "ci_high": hi})
    return _frame(rows, [*by, "metric", "n_games", "n_seeds", "mean", "ci_low", "ci_high"], per_game, by)


def paired(per_game: pl.DataFrame, by: list[str], metrics: list[str], boot: Bootstrap) -> pl.DataFrame:
    """Differences a - b between cells that differ in exactly one grouping column, on common seeds."""
    means = seed_means(per_game, by, metrics)
    table: dict[tuple, dict[str, dict[Any, float]]] = {}
    for row in means.iter_rows(named=True):
        cell = tuple(row[c] for c in by)
        table.setdefault(cell, {}).setdefault(row["metric"], {})[row["seed"]] = row["value"]
    rows = []
    for a, b in combinations(sorted(table, key=_sort_key), 2):
        changed = [c for c, x, y in zip(by, a, b, strict=True) if x != y]
        if len(changed) != 1:
            continue
        for metric in metrics:
            sa, sb = table[a].get(metric, {}), table[b].get(metric, {})
            common = sorted(set(sa) & set(sb))
            if not common:
                continue
            diff = np.array([sa[s] - sb[s] for s in common])
            lo, hi = boot.interval(diff)
            rows.append(
                {c: v for c, v in zip(by, a, strict=True) if c not in changed}
                | {"factor": changed[0], "a": _text(a[by.index(changed[0])]), "b": _text(b[by.index(changed[0])]),
                   "metric": metric, "n_seeds": len(common), "mean_diff": float(diff.mean()),
                   "ci_low": lo, "ci_high": hi}
            )
    cols = [*by, "factor", "a", "b", "metric", "n_seeds", "mean_diff", "ci_low", "ci_high"]
    return _frame(rows, cols, per_game, by)


def _text(v: Any) -> str | None:
    return None if v is None else str(v)


def _sort_key(cell: tuple) -> tuple:
    return tuple((v is None, str(v)) for v in cell)


def _frame(rows: list[dict], cols: list[str], per_game: pl.DataFrame, by: list[str]) -> pl.DataFrame:
    """Rows with the grouping columns keeping their types, even when there are none."""
    schema = {c: per_game.schema[c] for c in by} | {
        "metric": pl.String, "factor": pl.String, "a": pl.String, "b": pl.String,
        "n_games": pl.Int64, "n_seeds": pl.Int64, "mean": pl.Float64, "mean_diff": pl.Float64,
        "ci_low": pl.Float64, "ci_high": pl.Float64,
    }
    return pl.DataFrame(rows, schema={c: schema[c] for c in cols})
