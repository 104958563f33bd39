"""Intervals of seed-clustered estimates: the method, the fewest seeds it is shown for, and its measured coverage.

Every cell of a block plays the block's seed (common random numbers), so games of one seed are not independent:
the seed is the cluster. Every estimate of the report and the dataset is a mean over seeds of one value per seed
(a cell's mean of seed means, a paired difference at each seed, a head-to-head difference averaged over matched
cells at each seed), or a coefficient of a regression clustered by seed (``analysis.outcome_model``).

The method (ours, chosen by the coverage study ``bench/coverage.py``): Student's t over seeds, ``mean ± t(G − 1)
s / sqrt(G)`` for G seeds; for a mean of seed means this is the cluster-robust (CR1) interval with G − 1 degrees of
freedom, the interval statsmodels gives a coefficient clustered by seed, which ``coefficient`` takes. Measured on a
strategy sweep whose truth is known (a normal figure, a paired difference, a bounded figure and a bounded, mildly
skewed one), nominal 95% intervals covered within [0.93, 0.97] from 5 seeds on (``COVERAGE``, ``bench/RESULTS.md``);
the seed-clustered percentile bootstrap it replaces covered 0.90 at 10 seeds. Below ``MIN_SEEDS`` an estimate is
shown without an interval, saying why. What the same study shows the method does not do: seed values half zero with
a long tail (a payoff when half the games end without a deal) cover less (``SKEWED_COVERAGE``); a difference half
zero whose mean sits at zero covers more (``SPIKED_COVERAGE``: wider than needed, never narrower).

Multiplicity (``holm``, ``simultaneous_level``): Holm's step-down adjustment of the p-values of a family of
contrasts, and Bonferroni's simultaneous intervals beside them (Holm gives no intervals of its own).

A statistic that is not a mean of seed values (a judging panel's kappas and alpha, ``analysis.agreement``) takes a
percentile interval over ``Bootstrap``'s resamples of the seeds instead (ours); its coverage of a known kappa is
checked by ``tests/analysis/test_agreement.py``.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats
from statsmodels.stats.multitest import multipletests

LEVEL = 0.95
MIN_SEEDS = 10
"""The fewest seeds an interval is shown for (ours, from the study): the study's figures already cover within [0.93,
0.97] from 5 seeds on, but 5 seeds cannot show whether a figure is half zero with a long tail, which covers 0.84 there
and 0.89 from 10 (``bench/RESULTS.md``); 10 is where the promise is made and the worst shape's shortfall bounded."""
METHOD = "Student t over seeds (cluster-robust, G − 1 degrees of freedom)"
COVERAGE = {10: (0.946, 0.952), 20: (0.947, 0.952), 30: (0.947, 0.953)}
"""Seeds -> (lowest, highest) coverage of nominal 95% intervals over the study's figures, as ``python
bench/coverage.py`` measured it (``bench/RESULTS.md``)."""
SKEWED_COVERAGE = {10: 0.888, 20: 0.922, 30: 0.927}
"""Seeds -> coverage for seed values half zero with a long tail (a joint payoff when half the games end without a
deal: skewness 1.6), measured by the same study: below nominal, said wherever intervals are shown."""
SPIKED_COVERAGE = {10: 0.974, 20: 0.953, 30: 0.951}
"""Seeds -> coverage for a difference half zero with heavy tails whose mean sits at zero (two sides' payoffs in one
game): above nominal at 10 seeds, so conservative."""
COMMAND = "python bench/coverage.py"
RESAMPLES = 2000
"""Resamples of the seeds a ``Bootstrap`` draws by default."""


def shown(seeds: int) -> bool:
    """Whether an estimate over ``seeds`` seeds gets an interval."""
    return seeds >= MIN_SEEDS


def note() -> str:
    """The method in one sentence, for the report and the card."""
    c = COVERAGE[MIN_SEEDS]
    return (f"Intervals: {LEVEL:.0%}, {METHOD} (ours); shown from {MIN_SEEDS} seeds, where nominal 95% intervals "
            f"covered {c[0]:.2f}–{c[1]:.2f} of known truths in our coverage study ({COMMAND}); fewer seeds: the "
            f"estimate alone. Seed values half zero with a long tail (payoffs when half the games end without a deal) "
            f"cover less: {SKEWED_COVERAGE[10]:.2f} at 10 seeds, {SKEWED_COVERAGE[30]:.2f} at 30; a difference half "
            f"zero with its mean at zero covers more ({SPIKED_COVERAGE[10]:.2f} at 10: wider than needed).")


def t_quantile(level: float, df: np.ndarray | int) -> np.ndarray:
    """The t quantile a two-sided interval at ``level`` with ``df`` degrees of freedom is that many SEs wide each way."""
    return np.asarray(stats.t.ppf(0.5 + level / 2, df))


def bounds(means: np.ndarray, sds: np.ndarray, seeds: np.ndarray | int,
           level: float = LEVEL) -> tuple[np.ndarray, np.ndarray]:
    """The t intervals of means of ``seeds`` seed values with sample SDs ``sds`` (vectorised: the one formula)."""
    n = np.asarray(seeds, dtype=float)
    half = t_quantile(level, n - 1) * np.asarray(sds) / np.sqrt(n)
    return means - half, means + half


def interval(values: np.ndarray, level: float = LEVEL) -> tuple[float | None, float | None]:
    """The interval of the mean of one value per seed, (None, None) below ``MIN_SEEDS``."""
    values = np.asarray(values, dtype=float)
    if not shown(len(values)):
        return None, None
    low, high = bounds(values.mean(), values.std(ddof=1), len(values), level)
    return float(low), float(high)


def contrast(values: np.ndarray, level: float = LEVEL) -> tuple[float | None, float | None, float | None]:
    """(low, high, p) of a mean difference of one value per seed; p of the difference being zero (two-sided t)."""
    values = np.asarray(values, dtype=float)
    low, high = interval(values, level)
    if low is None:
        return None, None, None
    n = len(values)
    return low, high, _p(float(values.mean()), float(values.std(ddof=1)) / math.sqrt(n), n)


def coefficient(estimate: float, se: float, seeds: int,
                level: float = LEVEL) -> tuple[float | None, float | None, float | None]:
    """(low, high, p) of a regression coefficient with a seed-clustered standard error (t with G − 1 df)."""
    if not shown(seeds) or not math.isfinite(se):
        return None, None, None
    half = float(t_quantile(level, seeds - 1)) * se
    return estimate - half, estimate + half, _p(estimate, se, seeds)


def _p(estimate: float, se: float, seeds: int) -> float:
    if se == 0:
        return 1.0 if estimate == 0 else 0.0
    return float(2 * stats.t.sf(abs(estimate / se), seeds - 1))


def holm(p: list[float | None]) -> list[float | None]:
    """Holm-adjusted p-values of a family (None where a contrast has no p-value, and it is not counted)."""
    given = [i for i, x in enumerate(p) if x is not None]
    out: list[float | None] = [None] * len(p)
    if given:
        adjusted = multipletests([p[i] for i in given], method="holm")[1]
        for i, a in zip(given, adjusted, strict=True):
            out[i] = float(a)
    return out


def at_level(estimate: float, low: float, high: float, seeds: int, level: float, wanted: float) -> tuple[float, float]:
    """An interval of this module (t with ``seeds`` - 1 degrees of freedom) at level ``wanted`` instead of ``level``:
    the same centre, the half-width scaled by the ratio of the two t quantiles."""
    half = (high - low) / 2 * float(t_quantile(wanted, seeds - 1) / t_quantile(level, seeds - 1))
    return estimate - half, estimate + half


def simultaneous_level(family: int, level: float = LEVEL) -> float:
    """Bonferroni's level for each of ``family`` intervals, so that all cover together with ``level``."""
    return 1 - (1 - level) / max(family, 1)


def coverage(population: np.ndarray, seeds: int, replications: int, rng: np.random.Generator,
             level: float = LEVEL) -> float:
    """The share of intervals that cover the population's mean, each from ``seeds`` seed values drawn with
    replacement from ``population`` (iid draws from a distribution whose mean is known exactly)."""
    population = np.asarray(population, dtype=float)
    draws = population[rng.integers(0, len(population), size=(replications, seeds))]
    low, high = bounds(draws.mean(axis=1), draws.std(axis=1, ddof=1), seeds, level)
    truth = population.mean()
    return float(np.mean((low <= truth) & (truth <= high)))


class Bootstrap:
    """Seeded resamples of the seeds, for a statistic that is not a mean of seed values (module docstring): one count
    matrix per number of seeds, so a report's intervals are reproducible."""

    def __init__(self, resamples: int = RESAMPLES, level: float = LEVEL, seed: int = 0) -> None:
        self.resamples = resamples
        self.level = level
        self._rng = np.random.default_rng(seed)
        self._counts: dict[int, np.ndarray] = {}

    def counts(self, n: int) -> np.ndarray:
        """(resamples x n) counts: how often each resample drew each of n seeds."""
        if n not in self._counts:
            index = self._rng.integers(0, n, size=(self.resamples, n))
            counts = np.zeros((self.resamples, n))
            np.add.at(counts, (np.repeat(np.arange(self.resamples), n), index.ravel()), 1.0)
            self._counts[n] = counts
        return self._counts[n]
