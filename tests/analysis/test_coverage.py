"""The report's intervals cover at their nominal rate: the coverage study of ``bench/coverage.py``, in CI.

The bench plays a 2,000-block ``power_pilot`` sweep (a few minutes) and saved each figure's value per seed in
``tests/data/coverage_population.parquet``; here the intervals are checked against that population, whose means are
known exactly (``analysis.intervals.coverage``: seeds drawn with replacement, the report's interval, does it cover).
The interval is a closed formula, so 20,000 intervals per figure take milliseconds: the binomial standard error of a
coverage of 0.95 is then 0.0015, and the band [0.93, 0.97] is 13 of them wide on each side (no tolerance is added).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from bargain_ray.analysis.intervals import COVERAGE, LEVEL, MIN_SEEDS, SKEWED_COVERAGE, SPIKED_COVERAGE, coverage

POPULATION = pl.read_parquet(Path(__file__).parents[1] / "data" / "coverage_population.parquet")
REPLICATIONS = 20_000
STUDY = POPULATION.filter(pl.col("study"))["figure"].unique(maintain_order=True).to_list()


def values(figure: str) -> np.ndarray:
    return POPULATION.filter(pl.col("figure") == figure)["value"].to_numpy()


@pytest.mark.parametrize("figure", STUDY)
def test_intervals_at_10_seeds_cover_within_the_band(figure: str) -> None:
    covered = coverage(values(figure), 10, REPLICATIONS, np.random.default_rng(10), LEVEL)
    assert 0.93 <= covered <= 0.97, (figure, covered)


def test_what_the_method_says_of_its_coverage_is_what_the_study_measures() -> None:
    """The figures the report and the card quote (``COVERAGE`` at the minimum of seeds, and the two shapes outside the
    promise) are the study's, within its noise; below the minimum the worst shape falls further."""
    rng = np.random.default_rng(11)
    at = [coverage(values(f), MIN_SEEDS, REPLICATIONS, rng, LEVEL) for f in STUDY]
    low, high = COVERAGE[MIN_SEEDS]
    assert low - 0.005 <= min(at) and max(at) <= high + 0.005, at
    skewed, spiked = values("joint payoff (half zero, long tail)"), values("seller - buyer payoff, one game (half zero)")
    for seeds in (10, 30):
        assert coverage(skewed, seeds, REPLICATIONS, rng, LEVEL) == pytest.approx(SKEWED_COVERAGE[seeds], abs=0.01)
        assert coverage(spiked, seeds, REPLICATIONS, rng, LEVEL) == pytest.approx(SPIKED_COVERAGE[seeds], abs=0.01)
    assert coverage(skewed, 5, REPLICATIONS, rng, LEVEL) < SKEWED_COVERAGE[MIN_SEEDS] - 0.03
