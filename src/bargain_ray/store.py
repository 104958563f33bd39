"""The sweep folder: the only code that reads or writes it.

``manifest.json`` fixes the sweep's creation date and what determines its games;
``journal.jsonl`` gets one line per finished game, appended durably by the
driver; the parquet tables are rebuilt from the journal at the end.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl

from bargain_ray.design import digest

JOURNAL = "journal.jsonl"
MANIFEST = "manifest.json"


class ChangedConfig(RuntimeError):
    """The sweep folder holds games made under another config."""


class SweepStore:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._journal = None

    @property
    def manifest_path(self) -> Path:
        return self.path / MANIFEST

    def open(self, grid: str, components: dict[str, Any], provenance: dict[str, Any] | None = None) -> dict[str, Any]:
        """Create the folder or check that its manifest matches; returns the manifest."""
        self.path.mkdir(parents=True, exist_ok=True)
        if self.manifest_path.exists():
            manifest = json.loads(self.manifest_path.read_text())
            changed = [k for k in sorted(set(manifest["components"]) | set(components))
                       if digest(manifest["components"].get(k)) != digest(components.get(k))]
            if changed:
                raise ChangedConfig(
                    f"{self.path} holds games of a different config: changed {', '.join(changed)}. "
                    "Results are never mixed: restore the config to resume, or start a new sweep "
                    f"folder with run.dir=<new path>."
                )
            return manifest
        manifest = {
            "grid": grid,
            "created": datetime.now(UTC).strftime("%Y%m%d"),
            "components": components,
        } | (provenance or {})
        tmp = self.manifest_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(manifest, indent=1, default=str))
        os.replace(tmp, self.manifest_path)
        return manifest

    def records(self) -> Iterator[dict[str, Any]]:
        """Every journaled game, oldest first; a torn last line (a kill mid-write) is skipped."""
        path = self.path / JOURNAL
        if not path.exists():
            return
        with path.open("rb") as f:
            for line in f:
                if not line.endswith(b"\n"):
                    break
                yield json.loads(line)

    def finished(self) -> dict[str, str]:
        """unit_id -> unit hash of every game with a known result (skipped on resume)."""
        done: dict[str, str] = {}
        for rec in self.records():
            unit = rec["unit"]
            if rec["outcome"]["known"]:
                done[unit["unit_id"]] = unit["hash"]
            else:
                done.pop(unit["unit_id"], None)
        return done

    def append(self, record: dict[str, Any]) -> None:
        """Journal one finished game durably before anything else happens."""
        self.append_many([record])

    def append_many(self, records: list[dict[str, Any]]) -> None:
        """Journal games that finished together: one write, one fsync."""
        if self._journal is None:
            path = self.path / JOURNAL
            self._repair_tail(path)
            self._journal = path.open("ab")
        self._journal.write(b"".join(json.dumps(r, default=str).encode() + b"\n" for r in records))
        self._journal.flush()
        os.fsync(self._journal.fileno())

    @staticmethod
    def _repair_tail(path: Path) -> None:
        """Cut a torn last line left by a kill, so the next append starts clean."""
        if not path.exists() or path.stat().st_size == 0:
            return
        data = path.read_bytes()
        if not data.endswith(b"\n"):
            path.write_bytes(data[: data.rfind(b"\n") + 1])

    def close(self) -> None:
        if self._journal is not None:
            self._journal.close()
            self._journal = None

    def write_tables(self, chunk: int = 2000) -> dict[str, int]:
        """games/turns/calls parquet from the journal, the latest record of each unit.

        Streams the journal in chunks of ``chunk`` games so the driver's memory
        stays flat however long the sweep is.
        """
        latest: dict[str, int] = {}
        for i, rec in enumerate(self.records()):
            latest[rec["unit"]["unit_id"]] = i
        keep = set(latest.values())
        parts = self.path / ".parts"
        shutil.rmtree(parts, ignore_errors=True)
        parts.mkdir()
        rows: dict[str, list[dict[str, Any]]] = {"games": [], "turns": [], "calls": []}
        written: dict[str, list[Path]] = {name: [] for name in rows}

        def flush() -> None:
            for name, batch in rows.items():
                if batch:
                    frame = pl.DataFrame(batch, schema=SCHEMAS.get(name), infer_schema_length=None)
                    path = parts / f"{name}-{len(written[name]):05d}.parquet"
                    frame.write_parquet(path)
                    written[name].append(path)
                    batch.clear()

        for i, rec in enumerate(self.records()):
            if i not in keep:
                continue
            rows["games"].append(game_row(rec))
            rows["turns"].extend(turn_row(t) for t in rec["turns"])
            rows["calls"].extend(call_row(c) for c in rec["calls"])
            if len(rows["games"]) >= chunk:
                flush()
        flush()
        counts = {}
        for name, paths in written.items():
            target = self.path / f"{name}.parquet"
            if paths:
                # Journal order is block order up to games finishing out of turn; no global sort,
                # so memory stays flat in the number of games.
                frame = pl.concat([pl.scan_parquet(p) for p in paths], how="diagonal_relaxed")
                frame.sink_parquet(target, row_group_size=chunk)  # small row groups: the writer buffers one
            else:
                pl.DataFrame(schema=SCHEMAS.get(name)).write_parquet(target)
            counts[name] = pl.scan_parquet(target).select(pl.len()).collect().item()
        shutil.rmtree(parts)
        return counts


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
