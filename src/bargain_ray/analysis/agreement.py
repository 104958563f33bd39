"""Agreement between readers of the same games: Cohen's κ per pair, Fleiss' κ and Krippendorff's α over all, and
shares (how often a read flips, how often repeats agree), each with a percentile interval from the bootstrap
clustered by seed.

The statistics are the libraries' (statsmodels' ``cohens_kappa`` and ``fleiss_kappa``, the ``krippendorff``
package's nominal α), computed on the games as read. The interval resamples seeds (``analysis.intervals.Bootstrap``; the
report's means take t intervals over seeds, which a kappa is not): the games of one block share its seed, and the reads of one game (its repeats, its
swapped reads) are never independent, so an analytic standard error that takes games (or reads) as independent
would be too narrow, and α has none in closed form. A resample draws the seeds with replacement and takes each
game as often as its seed was drawn (the statistic recomputed on those games); the interval is the percentiles of
the resampled values (ours; its coverage is measured by simulation in ``tests/analysis/test_agreement.py``). A
resample whose statistic is undefined (every game of it in one category: κ and α divide by zero) is left out of
the percentiles; with fewer than two seeds, or an undefined estimate, there is no interval.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import krippendorff
import numpy as np
from pydantic import BaseModel
from statsmodels.stats.inter_rater import cohens_kappa, fleiss_kappa

from bargain_ray.analysis.intervals import Bootstrap

MISSING = -1
"""A label a rater did not give (a read that could not be made, a game no human labelled)."""

Statistic = Callable[[np.ndarray], float]
"""A statistic of the games weighted by integer counts (1 each as read; a resample's counts otherwise)."""


class Estimate(BaseModel):
    """A statistic over games with its interval (None where undefined), and how many games and seeds it read."""

    value: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    games: int
    seeds: int

    def text(self, digits: int = 2) -> str:
        """``0.62 [0.48, 0.75]``, the value alone without an interval, ``undefined`` without a value."""
        if self.value is None:
            return "undefined"
        shown = f"{self.value:.{digits}f}"
        return shown if self.ci_low is None else f"{shown} [{self.ci_low:.{digits}f}, {self.ci_high:.{digits}f}]"


def _quiet(statistic: Callable[[], float]) -> float:
    """The statistic, NaN where it divides by zero (the libraries warn, then return NaN)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            value = float(statistic())
        except (ValueError, ZeroDivisionError):  # krippendorff refuses a domain of one value
            return float("nan")
    return value


class Ratings:
    """Nominal labels of games by raters: ``labels[game, rater]`` an index into ``categories`` (``MISSING`` where a
    rater gave none), each game's seed beside it."""

    def __init__(self, labels: np.ndarray, seeds: np.ndarray, categories: list[str]) -> None:
        self.labels = np.asarray(labels, dtype=np.int64)
        self.seeds = np.asarray(seeds)
        self.categories = categories

    @classmethod
    def of(cls, rows: list[list[str | None]], seeds: list[int], categories: list[str] | None = None) -> Ratings:
        """From one row of labels per game (None: no label), the categories in first-seen order unless given."""
        known = categories or list(dict.fromkeys(v for row in rows for v in row if v is not None))
        index = {c: i for i, c in enumerate(known)}
        labels = np.array([[MISSING if v is None else index[v] for v in row] for row in rows], dtype=np.int64)
        return cls(labels.reshape(len(rows), -1), np.array(seeds), known)

    # --- the statistics, each on games weighted by integer counts

    def cohen(self, a: int, b: int) -> tuple[Statistic, np.ndarray]:
        """Cohen's κ between raters ``a`` and ``b`` (statsmodels), over the games both labelled."""
        both = (self.labels[:, a] != MISSING) & (self.labels[:, b] != MISSING)
        k = len(self.categories)
        cells = self.labels[both, a] * k + self.labels[both, b]

        def kappa(weights: np.ndarray) -> float:
            table = np.bincount(cells, weights=weights, minlength=k * k).reshape(k, k)
            return _quiet(lambda: cohens_kappa(table, return_results=False))

        return kappa, both

    def counts(self, raters: list[int] | None = None) -> np.ndarray:
        """(games x categories): how many of ``raters`` (all by default) gave each game each label."""
        labels = self.labels if raters is None else self.labels[:, raters]
        k = len(self.categories)
        return np.stack([(labels == c).sum(axis=1) for c in range(k)], axis=1) if k else np.zeros((len(labels), 0))

    def fleiss(self, raters: list[int] | None = None) -> tuple[Statistic, np.ndarray]:
        """Fleiss' κ (statsmodels) over the games every one of ``raters`` labelled (it needs as many labels a game)."""
        labels = self.labels if raters is None else self.labels[:, raters]
        complete = (labels != MISSING).all(axis=1)
        counts = self.counts(raters)[complete]

        def kappa(weights: np.ndarray) -> float:
            return _quiet(lambda: fleiss_kappa(np.repeat(counts, weights.astype(np.int64), axis=0)))

        return kappa, complete

    def alpha(self, raters: list[int] | None = None) -> tuple[Statistic, np.ndarray]:
        """Krippendorff's α for nominal data (the ``krippendorff`` package) over the games with two labels or more
        (a game with fewer has no pair to compare; missing labels are allowed)."""
        counts = self.counts(raters)
        pairable = counts.sum(axis=1) >= 2
        counts = counts[pairable]

        def alpha(weights: np.ndarray) -> float:
            repeated = np.repeat(counts, weights.astype(np.int64), axis=0)
            return _quiet(lambda: krippendorff.alpha(value_counts=repeated, level_of_measurement="nominal"))

        return alpha, pairable


def share(values: np.ndarray) -> Statistic:
    """The mean of a 0/1 value per game (a rate), weighted."""
    values = np.asarray(values, dtype=float)

    def mean(weights: np.ndarray) -> float:
        total = weights.sum()
        return float(values @ weights / total) if total else float("nan")

    return mean


def clustered(statistic: Statistic, seeds: np.ndarray, boot: Bootstrap) -> Estimate:
    """``statistic`` over the games whose seeds are ``seeds`` (one a game), with the percentile interval of its
    values over ``boot``'s resamples of the seeds (each game weighted by how often its seed was drawn)."""
    unique, index = np.unique(np.asarray(seeds), return_inverse=True)
    point = statistic(np.ones(len(index), dtype=np.int64)) if len(index) else float("nan")
    if np.isnan(point):
        return Estimate(value=None, games=len(index), seeds=len(unique))
    if len(unique) < 2:
        return Estimate(value=point, games=len(index), seeds=len(unique))
    draws = boot.counts(len(unique))[:, index]
    values = np.array([statistic(weights) for weights in draws])
    defined = values[~np.isnan(values)]
    if len(defined) < len(values) / 2:  # most resamples undefined: no interval worth the name
        return Estimate(value=point, games=len(index), seeds=len(unique))
    tail = (1 - boot.level) / 2 * 100
    low, high = np.percentile(defined, [tail, 100 - tail])
    return Estimate(value=point, ci_low=float(low), ci_high=float(high), games=len(index), seeds=len(unique))


def estimate(statistic: tuple[Statistic, np.ndarray], seeds: np.ndarray, boot: Bootstrap) -> Estimate:
    """``clustered`` over the games a statistic reads (its mask): Cohen's κ, Fleiss' κ or α of a ``Ratings``."""
    function, games = statistic
    return clustered(function, np.asarray(seeds)[games], boot)
