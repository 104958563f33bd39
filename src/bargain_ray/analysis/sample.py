"""Which games a report shows and exports one by one: all of a small sweep, a sample per cell of a large one.

Ours (seed 002 is silent on scale): a page with 100,000 transcripts does not open, and 100,000
raw files take longer to write than the whole analysis. The page shows the first ``SAMPLE``
games of each cell; ``raw/`` holds one file per game up to ``RAW_ALL_MAX`` games, beyond that
the sampled games' files, and the sweep's ``journal.jsonl`` stays the archive of every game.
"""

from __future__ import annotations

import polars as pl

from bargain_ray.analysis.build import Analysis
from bargain_ray.analysis.per_game import in_design_order

SAMPLE = 10
"""Transcripts shown on the page per cell (the first in design order)."""
RAW_ALL_MAX = 5000
"""Up to this many games, ``raw/`` holds every game's file."""


def sampled(a: Analysis) -> set[str]:
    """The unit ids of the first ``SAMPLE`` games of each cell, in design order."""
    shown = in_design_order(a.scan_per_game.select("unit_id", "cell", "block", "position")).group_by("cell", maintain_order=True).head(SAMPLE).select("unit_id").collect()
    return set(shown["unit_id"].to_list())


def game_count(a: Analysis) -> int:
    return a.scan_per_game.select(pl.len()).collect().item()


def raw_scope(a: Analysis) -> set[str] | None:
    """The games whose raw file is written: None for every game, else the page's sample."""
    return None if game_count(a) <= RAW_ALL_MAX else sampled(a)
