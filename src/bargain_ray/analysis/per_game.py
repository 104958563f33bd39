"""Metrics per game and per turn, as lazy frames over the tables.

Every figure was computed once, when its game ended (the family's ``Game.game_metrics`` and
``turn_metrics``), and flattened into ``games.parquet`` / ``turns.parquet`` by ``store.rows``;
analysis only selects and groups, so it names no family and holds no record.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import polars as pl

from bargain_ray.analysis.sweep import Sweep
from bargain_ray.games import family
from bargain_ray.games.base import Game
from bargain_ray.store.rows import IDENTITY, SHARED_SCHEMA, meanings

EMPTY = SHARED_SCHEMA
"""The shared columns' types, for a sweep that has no game yet (the report still builds)."""
NOT_METRICS = frozenset({*IDENTITY, "known"})
"""Columns that describe a game rather than measure it."""
PART_GAMES = 10_000
"""Games whose turns are sorted at a time when a per-turn table is written in design order."""
_RECORD_ONLY = ("outcome_json", "unit_hash")
"""Columns of games.parquet kept for replay and resume, not figures."""


def metrics_per_game(sweep: Sweep) -> pl.LazyFrame:
    """One row per game: every figure of games.parquet, in journal order (``in_design_order`` sorts it)."""
    games = sweep.scan("games")
    names = games.collect_schema().names()
    return games.drop([c for c in _RECORD_ONLY if c in names])


def in_design_order(frame: pl.LazyFrame) -> pl.LazyFrame:
    """By block, then position in the block: the order the design laid the games out; the unit id breaks
    ties (re-scored replays all sit at block 0, position 0), so every export of one folder is the same."""
    return frame.sort("block", "position", "unit_id", nulls_last=True)


def metrics_per_turn(sweep: Sweep) -> pl.LazyFrame:
    """One row per turn a family scored, with its game's identity, in journal order (the export writes it in
    design order, ``sink_turns_in_design_order``)."""
    turns = sweep.scan("turns")
    if "turn_scored" not in turns.collect_schema().names():
        return pl.LazyFrame()
    ident = sweep.scan("games").select(IDENTITY)
    scored = turns.filter(pl.col("turn_scored")).drop("turn_scored", "call_ids")
    return ident.join(scored, on="unit_id", how="inner")


def sink_turns_in_design_order(turns: pl.LazyFrame, games: pl.LazyFrame, path: Path) -> None:
    """Write ``turns`` (rows keyed by ``unit_id`` and ``turn``) to the parquet file ``path``, its games in design
    order and each game's turns in order, sorting ``PART_GAMES`` games' rows at a time: the memory is a part's,
    not the sweep's (sorting 100,000 games' turns at once held three times the table)."""
    order = in_design_order(games.select("unit_id", "block", "position")).select("unit_id").collect()
    with tempfile.TemporaryDirectory(dir=path.parent, prefix=".parts-") as tmp:
        parts = []
        for lo in range(0, order.height, PART_GAMES) or [0]:
            ids = order.slice(lo, PART_GAMES).with_row_index("rank")
            rows = turns.filter(pl.col("unit_id").is_in(ids["unit_id"].implode())).collect(engine="streaming")
            parts.append(Path(tmp) / f"{lo:012d}.parquet")
            ids.join(rows, on="unit_id").sort("rank", "turn").drop("rank").write_parquet(parts[-1])
        pl.scan_parquet(parts).sink_parquet(path, engine="streaming")


def metric_columns(schema: pl.Schema) -> list[str]:
    """Numeric and boolean columns that measure a game (identity and ids excluded)."""
    return [
        name for name, dtype in schema.items()
        if name not in NOT_METRICS and (dtype.is_numeric() or dtype == pl.Boolean)
    ]


def game_class(name: str | None) -> type[Game] | None:
    """A family's Game class (its hooks), or None for a family this install does not know."""
    try:
        return family(str(name)).GAME
    except ValueError:
        return None


def cell_metrics(name: str | None) -> tuple[str, ...]:
    """The metrics a family declares for the export's ``metrics_by_cell`` (``Game.cell_metrics``); none for a
    family this install does not know."""
    cls = game_class(name)
    return cls.cell_metrics if cls else ()


def illegal_rules(name: str | None) -> frozenset[str]:
    """The rule codes a family counts as illegal moves (``Game.illegal_rules``)."""
    cls = game_class(name)
    return cls.illegal_rules if cls else frozenset()


def ground_truth(name: str | None) -> tuple[str, ...]:
    """The outcome fields a family declares as the game's private truths (``Game.ground_truth``)."""
    cls = game_class(name)
    return cls.ground_truth if cls else ()


def fields(families: list[Any]) -> dict[str, str]:
    """What the columns of ``metrics_per_game`` mean: the shared ones as their row model says (``store.rows``), then
    the figures of the families a sweep played."""
    out = meanings("games")
    for name in families:
        cls = game_class(name)
        out |= cls.metric_fields() if cls else {}
    return out
