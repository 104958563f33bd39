"""Metrics per game and per turn, as lazy frames over the tables.

Every figure was computed once, when its game ended (the family's ``Game.game_metrics`` and
``turn_metrics``), and flattened into ``games.parquet`` / ``turns.parquet`` by ``store.rows``;
analysis only selects and groups, so it names no family and holds no record.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from bargain_ray.analysis.sweep import Sweep
from bargain_ray.games import family
from bargain_ray.games.base import Game
from bargain_ray.store.rows import IDENTITY, SHARED_SCHEMA

EMPTY = SHARED_SCHEMA
"""The shared columns' types, for a sweep that has no game yet (the report still builds)."""
NOT_METRICS = frozenset({*IDENTITY, "known"})
"""Columns that describe a game rather than measure it."""
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
    """One row per turn a family scored, with its game's identity."""
    turns = sweep.scan("turns")
    if "turn_scored" not in turns.collect_schema().names():
        return pl.LazyFrame()
    ident = sweep.scan("games").select(IDENTITY)
    scored = turns.filter(pl.col("turn_scored")).drop("turn_scored", "call_ids")
    return ident.join(scored, on="unit_id", how="inner").sort("block", "position", "unit_id", "turn", nulls_last=True)


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


FIELDS = {
    "unit_id": "readable game id: experiment, block, position, pairing, assignment (join key to every table)",
    "experiment": "experiment label of the grid",
    "game": "game config name", "family": "game family",
    "condition": "protocol condition", "pairing": "model letters in agent order (A, B, ...)",
    "assignment": "which agent takes which role", "cell": "condition|pairing|assignment[|first speaker]",
    "seed": "the block's seed: the same seed means the same random draws in every cell",
    "block": "replicate block", "position": "position within the block (seeded shuffle)",
    "first_speaker": "role that moved first",
    "*_model": "model that played the role, as configured",
    "*_agent": "agent letter (A, B, ...) that played the role",
    "status": "AGREEMENT, NO_AGREEMENT, FORMAT_FAILURE (known) or TECHNICAL_ERROR (unknown, unscored)",
    "outcome": "`deal`, `no_deal`, or `format_failure` (`technical_failure`: unknown, unscored, re-run on resume)",
    "failed_role": "the role whose repairs ran out, when the game ended on its invalid turn",
    "known": "the game has an economic result (technical failures do not)",
    "reason": "why the game ended",
    "agreement": "a deal was made (null if unknown)",
    "format_failure": "a side used up its repairs (null if unknown)",
    "technical_failure": "the game ended on an API/technical failure: unknown, unscored, re-run on resume",
    "technical_pass": "the game ended in AGREEMENT or NO_AGREEMENT",
    "rounds": "turns played", "rounds_to_agreement": "turns played, for deals only",
    "calls_attempted": "model calls, repairs included", "total_retries": "format retries (repair prompts) across the game",
    "invalid_attempts": "replies that broke a rule",
    "input_tokens": "input tokens over the game's calls", "output_tokens": "output tokens over the game's calls",
    "cost_usd": "cost of the game's calls in US dollars",
    "pareto_optimal": "the deal lies on the exact Pareto frontier",
    "dist_pareto": "Euclidean distance in utility points from the deal to the Pareto frontier",
    "dist_nash": "distance to the Nash bargaining solution (max product of gains over no agreement)",
    "dist_max_welfare": "distance to the nearest deal with the best joint gain",
    "*_optimality": "1 - distance / diagonal of the utility ranges (negmas' optimality)",
}
"""What the shared and agreement-space columns of ``metrics_per_game`` mean."""


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


def family_fields(families: list[Any]) -> dict[str, str]:
    """The column docs of the families a sweep played."""
    out: dict[str, str] = {}
    for name in families:
        cls = game_class(name)
        out |= cls.metric_fields() if cls else {}
    return out
