"""Percentile bootstrap clustered by seed: average within seed, resample seeds.

Games that share a seed share their random draws (common random numbers),
so they are not independent; the seed is the unit of resampling. Every
estimate is the mean of per-seed means. Paired differences between two cells
use the seeds both cells played.

Vectorised: one resample matrix per number of seeds, held as counts (how often
each seed is drawn), so every cell and metric with that many seeds is resampled
at once by one matrix product.
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
        self._weights: dict[int, np.ndarray] = {}

    def _weights_of(self, n: int) -> np.ndarray:
        """(resamples x n) counts: row r says how often resample r drew each of the n seeds."""
        if n not in self._weights:
            index = self._rng.integers(0, n, size=(self.resamples, n))
            rows = np.repeat(np.arange(self.resamples), n)
            weights = np.zeros((self.resamples, n))
            np.add.at(weights, (rows, index.ravel()), 1.0)
            self._weights[n] = weights
        return self._weights[n]

    def intervals(self, samples: list[np.ndarray]) -> list[tuple[float | None, float | None]]:
        """The percentile interval of the mean of each vector of seed means (None with fewer than two seeds)."""
        out: list[tuple[float | None, float | None]] = [(None, None)] * len(samples)
        by_size: dict[int, list[int]] = {}
        for i, s in enumerate(samples):
            if len(s) >= 2:
                by_size.setdefault(len(s), []).append(i)
        tail = (1 - self.level) / 2 * 100
        for n, which in by_size.items():
            values = np.stack([samples[i] for i in which])  # (k x n)
            means = values @ self._weights_of(n).T / n  # (k x resamples)
            lo, hi = np.percentile(means, [tail, 100 - tail], axis=1)
            for j, i in enumerate(which):
                out[i] = (float(lo[j]), float(hi[j]))
        return out

    def interval(self, seed_means: np.ndarray) -> tuple[float | None, float | None]:
        """The percentile interval of the mean of ``seed_means`` (None with fewer than two seeds)."""
        return self.intervals([np.asarray(seed_means, dtype=float)])[0]


def seed_means(per_game: pl.DataFrame | pl.LazyFrame, by: list[str], metrics: list[str]) -> pl.DataFrame:
    """Long table (by..., metric, seed, value, games): each metric averaged within seed."""
    frame = per_game.lazy().select(*by, "seed", *(pl.col(m).cast(pl.Float64) for m in metrics))
    long = frame.unpivot(index=[*by, "seed"], on=metrics, variable_name="metric", value_name="value")
    return (
        long.drop_nulls("value")
        .group_by([*by, "metric", "seed"])
        .agg(pl.col("value").mean(), pl.len().alias("games"))
        .sort([*by, "metric", "seed"], nulls_last=True)
        .collect()
    )


def by_cell(per_game: pl.DataFrame | pl.LazyFrame, by: list[str], metrics: list[str], boot: Bootstrap) -> pl.DataFrame:
    """One row per cell and metric: games, seeds, mean of seed means, percentile CI."""
    grouped = (
        seed_means(per_game, by, metrics)
        .group_by([*by, "metric"], maintain_order=True)
        .agg(pl.col("games").sum().alias("n_games"), pl.len().alias("n_seeds"), pl.col("value"))
    )
    samples = [np.asarray(v, dtype=float) for v in grouped["value"].to_list()]
    lo, hi = zip(*boot.intervals(samples), strict=True) if samples else ((), ())
    out = grouped.drop("value").with_columns(
        pl.Series("mean", [float(s.mean()) for s in samples], dtype=pl.Float64),
        pl.Series("ci_low", list(lo), dtype=pl.Float64), pl.Series("ci_high", list(hi), dtype=pl.Float64),
    )
    return _typed(out, [*by, "metric", "n_games", "n_seeds", "mean", "ci_low", "ci_high"], per_game, by)


def paired(per_game: pl.DataFrame | pl.LazyFrame, by: list[str], metrics: list[str], boot: Bootstrap) -> pl.DataFrame:
    """Differences a - b between cells that differ in exactly one grouping column, on common seeds."""
    means = seed_means(per_game, by, metrics)
    cells = sorted({tuple(r) for r in means.select(by).iter_rows()}, key=_sort_key)
    index = {cell: i for i, cell in enumerate(cells)}
    seeds = sorted(set(means["seed"].to_list()))
    seed_index = {s: i for i, s in enumerate(seeds)}
    table = {}  # metric -> (seeds x cells) matrix of seed means, NaN where a cell has none
    for (metric,), part in means.group_by(["metric"], maintain_order=True):
        m = np.full((len(seeds), len(cells)), np.nan)
        cols = [index[tuple(r)] for r in part.select(by).iter_rows()]
        m[[seed_index[s] for s in part["seed"].to_list()], cols] = part["value"].to_numpy()
        table[metric] = m
    rows, samples = [], []
    for a, b in combinations(cells, 2):
        changed = [c for c, x, y in zip(by, a, b, strict=True) if x != y]
        if len(changed) != 1:
            continue
        for metric in metrics:
            if metric not in table:
                continue
            diff = table[metric][:, index[a]] - table[metric][:, index[b]]
            diff = diff[~np.isnan(diff)]
            if not len(diff):
                continue
            samples.append(diff)
            rows.append(
                {c: v for c, v in zip(by, a, strict=True) if c not in changed}
                | {"factor": changed[0], "a": _text(a[by.index(changed[0])]), "b": _text(b[by.index(changed[0])]),
                   "metric": metric, "n_seeds": len(diff), "mean_diff": float(diff.mean())}
            )
    for row, (lo, hi) in zip(rows, boot.intervals(samples), strict=True):
        row |= {"ci_low": lo, "ci_high": hi}
    cols = [*by, "factor", "a", "b", "metric", "n_seeds", "mean_diff", "ci_low", "ci_high"]
    return _frame(rows, cols, per_game, by)


def _text(v: Any) -> str | None:
    return None if v is None else str(v)


def _sort_key(cell: tuple) -> tuple:
    return tuple((v is None, str(v)) for v in cell)


def _schema(cols: list[str], per_game: pl.DataFrame | pl.LazyFrame, by: list[str]) -> dict[str, Any]:
    """The output columns' types, the grouping columns keeping theirs even when there are no rows."""
    source = per_game.lazy().collect_schema()
    schema = {c: source[c] for c in by} | {
        "metric": pl.String, "factor": pl.String, "a": pl.String, "b": pl.String,
        "n_games": pl.Int64, "n_seeds": pl.Int64, "mean": pl.Float64, "mean_diff": pl.Float64,
        "ci_low": pl.Float64, "ci_high": pl.Float64,
    }
    return {c: schema[c] for c in cols}


def _frame(rows: list[dict], cols: list[str], per_game: pl.DataFrame | pl.LazyFrame, by: list[str]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=_schema(cols, per_game, by))


def _typed(frame: pl.DataFrame, cols: list[str], per_game: pl.DataFrame | pl.LazyFrame, by: list[str]) -> pl.DataFrame:
    schema = _schema(cols, per_game, by)
    return frame.select(pl.col(c).cast(t) for c, t in schema.items())
