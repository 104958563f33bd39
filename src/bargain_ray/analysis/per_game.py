"""Metrics per game (and per turn where a family defines them), for every family.

The shared columns come from the loop's records (identity, status, rounds,
calls); a family adds its own through ``metrics.per_game(record)``; multi-issue
games add their place in the exact agreement space.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

import polars as pl

from bargain_ray.analysis.sweep import Sweep
from bargain_ray.core.hashing import digest
from bargain_ray.core.status import Status
from bargain_ray.games import family, load_game
from bargain_ray.games.multi_issue import frontier

IDENTITY = (
    "unit_id", "experiment", "game", "family", "condition", "pairing", "assignment", "cell",
    "seed", "block", "position", "first_speaker",
)
EMPTY = {c: pl.Int64 if c in ("assignment", "seed", "block", "position") else pl.String for c in IDENTITY} | {
    "status": pl.String, "known": pl.Boolean, "reason": pl.String, "agreement": pl.Boolean,
    "format_failure": pl.Boolean, "technical_failure": pl.Boolean, "rounds": pl.Int64,
    "rounds_to_agreement": pl.Int64, "calls": pl.Int64, "repairs": pl.Int64, "invalid_attempts": pl.Int64,
    "input_tokens": pl.Int64, "output_tokens": pl.Int64, "cost_usd": pl.Float64,
}
"""The shared columns' types, for a sweep that has no game yet (the report still builds)."""
NOT_METRICS = frozenset({*IDENTITY, "known"})
"""Columns that describe a game rather than measure it."""


def shared(record: dict[str, Any]) -> dict[str, Any]:
    """The columns every family has, from the loop's outcome, turns and calls."""
    unit, out, calls = record["unit"], record["outcome"], record["calls"]
    status = out["status"]
    rounds = len(record["turns"])
    row = {k: unit.get(k) for k in IDENTITY}
    row |= {f"model_{role}": name for role, name in (unit.get("models_by_role") or {}).items()}
    return row | {
        "status": status,
        "known": bool(out["known"]),
        "reason": out["reason"],
        "agreement": bool(out["agreement"]) if out["known"] else None,
        "format_failure": status == Status.FORMAT_FAILURE if out["known"] else None,
        "technical_failure": not out["known"],
        "rounds": rounds,
        "rounds_to_agreement": rounds if out["agreement"] else None,
        "calls": len(calls),
        "repairs": out["repairs_used"],
        "invalid_attempts": len(out["invalid_attempts"]),
        "input_tokens": sum(c.get("usage", {}).get("input_tokens", 0) for c in calls),
        "output_tokens": sum(c.get("usage", {}).get("output_tokens", 0) for c in calls),
        "cost_usd": sum(c.get("cost_usd", 0.0) for c in calls),
    }


def family_metrics(name: str | None) -> Any:
    """The family's metrics module, or None for a family this install does not know."""
    try:
        return family(str(name)).metrics
    except ValueError:
        return None


class Spaces:
    """Agreement spaces by game config, computed once per config."""

    def __init__(self) -> None:
        self._cache: dict[str, frontier.Space] = {}

    def of(self, config: dict[str, Any]) -> frontier.Space:
        key = digest(config)
        if key not in self._cache:
            self._cache[key] = frontier.space(load_game(config).config)
        return self._cache[key]


def space_columns(record: dict[str, Any], config: dict[str, Any] | None, spaces: Spaces) -> dict[str, Any]:
    """Distances of a multi-issue deal to the frontier, the Nash point and the best joint gain."""
    if config is None or config.get("family") != "multi_issue" or not record["outcome"]["agreement"]:
        return {}
    s = spaces.of(config)
    utilities = record["outcome"]["utilities"]
    point = (Fraction(utilities[s.roles[0]]["exact"]), Fraction(utilities[s.roles[1]]["exact"]))
    return frontier.distances(s, point)


def metrics_per_game(sweep: Sweep) -> pl.DataFrame:
    """One row per game: shared columns, the family's figures, and the agreement space."""
    spaces = Spaces()
    frames = []
    by_family: dict[str, list[dict[str, Any]]] = {}
    for rec in sweep.records:
        by_family.setdefault(rec["unit"].get("family"), []).append(rec)
    for name, records in by_family.items():
        module = family_metrics(name)
        per_game: Callable[[dict], dict] | None = getattr(module, "per_game", None)
        rows = []
        for rec in records:
            row = shared(rec)
            if per_game is not None and rec["outcome"]["known"]:
                row |= per_game(rec)
            row |= space_columns(rec, sweep.game_config(rec["unit"]), spaces)
            rows.append(row)
        frames.append(pl.DataFrame(rows, infer_schema_length=None))
    if not frames:
        return pl.DataFrame(schema=EMPTY)
    return pl.concat(frames, how="diagonal_relaxed").sort("block", "position", nulls_last=True)


def metrics_per_turn(sweep: Sweep) -> pl.DataFrame:
    """One row per turn for families that define ``per_turn``; empty otherwise."""
    rows = []
    for rec in sweep.records:
        per_turn = getattr(family_metrics(rec["unit"].get("family")), "per_turn", None)
        if per_turn is not None:
            ident = {k: rec["unit"].get(k) for k in IDENTITY}
            rows.extend(ident | r for r in per_turn(rec))
    return pl.DataFrame(rows, infer_schema_length=None) if rows else pl.DataFrame()


def metric_columns(frame: pl.DataFrame) -> list[str]:
    """Numeric and boolean columns that measure a game (identity and ids excluded)."""
    return [
        name for name, dtype in frame.schema.items()
        if name not in NOT_METRICS and (dtype.is_numeric() or dtype == pl.Boolean)
    ]


FIELDS = {
    "unit_id": "readable game id: experiment, block, position, pairing, assignment (join key to every table)",
    "experiment": "experiment label of the grid",
    "game": "game config name", "family": "game family",
    "condition": "protocol condition", "pairing": "model letters in agent order (A, B, ...)",
    "assignment": "which agent takes which role", "cell": "condition|pairing|assignment[|first speaker]",
    "seed": "the block's seed: the same seed means the same random draws in every cell",
    "block": "replicate block", "position": "position within the block (seeded shuffle)",
    "first_speaker": "role that moved first",
    "model_*": "model that played each role, as configured",
    "status": "AGREEMENT, NO_AGREEMENT, FORMAT_FAILURE (known) or TECHNICAL_ERROR (unknown, unscored)",
    "known": "the game has an economic result (technical failures do not)",
    "reason": "why the game ended",
    "agreement": "a deal was made (null if unknown)",
    "format_failure": "a side used up its repairs (null if unknown)",
    "technical_failure": "the game ended on an API/technical failure: unknown, unscored, re-run on resume",
    "rounds": "turns played", "rounds_to_agreement": "turns played, for deals only",
    "calls": "model calls, repairs included", "repairs": "repair prompts after invalid replies",
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
