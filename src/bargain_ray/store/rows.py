"""A journaled game as table rows: the one flattening of records, used by the tables and by analysis."""

from __future__ import annotations

import json
from typing import Any

import polars as pl


def _scalar(v: Any) -> Any:
    if isinstance(v, dict) and set(v) == {"exact", "value"}:
        return float(v["value"])
    if isinstance(v, bool | str | float) or v is None:
        return v
    if isinstance(v, int):
        return float(v)
    return json.dumps(v, default=str)


def game_row(rec: dict[str, Any]) -> dict[str, Any]:
    """One row of games.parquet: identity, status, and the outcome's figures flattened."""
    unit, out = rec["unit"], rec["outcome"]
    row = {
        "unit_id": unit["unit_id"], "game": unit.get("game"), "family": unit.get("family"),
        "condition": unit.get("condition"), "pairing": unit.get("pairing"),
        "assignment": unit.get("assignment"), "cell": unit.get("cell"), "seed": unit.get("seed"),
        "block": unit.get("block"), "position": unit.get("position"), "first_speaker": unit.get("first_speaker"),
        "status": out["status"], "known": out["known"], "agreement": out["agreement"], "reason": out["reason"],
        "calls_attempted": out["calls_attempted"], "repairs_used": out["repairs_used"],
        "invalid_attempts": len(out["invalid_attempts"]), "technical_pass": out["technical_pass"],
        "models_by_role": json.dumps(unit.get("models_by_role")),
        "agent_of_role": json.dumps(unit.get("agent_of_role")),
        "unit_hash": unit.get("hash"),
        "cost_usd": sum(c.get("cost_usd", 0.0) for c in rec["calls"]),
    }
    for key, value in out.items():
        if key in row or key in ("invalid_attempts", "models_by_role", "agent_of_role"):
            continue
        if isinstance(value, dict) and value and all(isinstance(v, dict) and "value" in v for v in value.values()):
            for sub, fig in value.items():
                row[f"{key}_{sub}"] = float(fig["value"])
        else:
            row[key] = _scalar(value)
    row["outcome"] = json.dumps(out, default=str)
    return row


TURN_SCHEMA = {
    "unit_id": pl.String, "turn": pl.Int64, "role": pl.String, "call_ids": pl.List(pl.String),
    "attempts": pl.Int64, "valid": pl.Boolean, "action": pl.String, "message": pl.String, "fields": pl.String,
}


def turn_row(t: dict[str, Any]) -> dict[str, Any]:
    f = t.get("fields", {})
    return {
        "unit_id": t["unit_id"], "turn": t["turn"], "role": t["role"], "call_ids": t["call_ids"],
        "attempts": t["attempts"], "valid": t["valid"], "action": f.get("action"),
        "message": f.get("message"), "fields": json.dumps(f, default=str),
    }


CALL_SCHEMA = {
    "call_id": pl.String, "unit_id": pl.String, "role": pl.String, "turn": pl.Int64, "repair": pl.Int64,
    "provider": pl.String, "model": pl.String, "request": pl.String, "response_text": pl.String,
    "stop_reason": pl.String, "input_tokens": pl.Int64, "output_tokens": pl.Int64,
    "cache_read_tokens": pl.Int64, "cache_write_tokens": pl.Int64, "reasoning_tokens": pl.Int64,
    "latency_s": pl.Float64, "attempts": pl.Int64, "attempt_errors": pl.List(pl.String),
    "request_id": pl.String, "model_version": pl.String, "cost_usd": pl.Float64, "status": pl.String,
    "valid": pl.Boolean, "rule": pl.String, "error": pl.String, "resumed": pl.Boolean,
}


def call_row(c: dict[str, Any]) -> dict[str, Any]:
    usage = c.get("usage", {})
    row = {k: c.get(k) for k in CALL_SCHEMA if k not in usage}
    row["request"] = json.dumps(c["request"], ensure_ascii=False)
    row |= {k: usage.get(k, 0) for k in ("input_tokens", "output_tokens", "cache_read_tokens",
                                          "cache_write_tokens", "reasoning_tokens")}
    return row


SCHEMAS: dict[str, dict[str, Any] | None] = {"games": None, "turns": TURN_SCHEMA, "calls": CALL_SCHEMA}
