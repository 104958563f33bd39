"""The dataset export in seed 002's layout: raw JSONL per game, parquet tables, a card.

``raw/`` is the archival truth (header, turns with their calls, result); ``data/``
and ``metrics/`` are derived and can be regenerated from it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import polars as pl

from bargain_ray.analysis.build import Analysis
from bargain_ray.analysis.card import card
from bargain_ray.analysis.per_game import in_design_order
from bargain_ray.analysis.sample import raw_scope
from bargain_ray.store import MANIFEST

LOG_VERSION = 1
GROUND_TRUTH = ("seller_cost", "buyer_value")
"""Outcome fields that are private truths of the game, copied to the header as seed 002 keeps them."""


def raw_lines(record: dict[str, Any], config: dict[str, Any] | None, prompts: str | None,
              briefs: dict[str, tuple[str, bool]]) -> list[dict[str, Any]]:
    """One game as JSONL records: a header, one line per turn (its calls inside), the result."""
    calls = {c["call_id"]: c for c in record["calls"]}
    header = {
        "type": "header", "log_version": LOG_VERSION, "unit": record["unit"], "game_config": config,
        "prompts_hash": prompts,
        "ground_truth": {k: record["outcome"][k] for k in GROUND_TRUTH if k in record["outcome"]},
        "private_briefs": {role: {"text": text, "sent": sent} for role, (text, sent) in briefs.items()},
    }
    lines = [header]
    placed = set()
    for t in record["turns"]:
        placed.update(t["call_ids"])
        lines.append({"type": "turn", **t, "calls": [calls[i] for i in t["call_ids"] if i in calls]})
    for c in record["calls"]:  # a call that failed technically belongs to no finished turn
        if c["call_id"] not in placed:
            lines.append({"type": "turn", "unit_id": c["unit_id"], "turn": c["turn"], "role": c["role"],
                          "call_ids": [c["call_id"]], "attempts": 1, "valid": False, "unfinished": True,
                          "fields": {}, "calls": [c]})
    lines.append({"type": "result", "unit_id": record["unit"]["unit_id"], **record["outcome"]})
    return lines


def tables(analysis: Analysis) -> dict[str, tuple[str, pl.LazyFrame | pl.DataFrame]]:
    """config name -> (relative parquet path, frame), in card order."""
    s = analysis.sweep
    out = {
        "games": ("data/games.parquet", s.scan("games")),
        "turns": ("data/turns.parquet", s.scan("turns")),
        "calls": ("data/calls.parquet", s.scan("calls")),
        "metrics_per_game": ("metrics/metrics_per_game.parquet", in_design_order(analysis.scan_per_game)),
        "metrics_by_cell": ("metrics/metrics_by_cell.parquet", analysis.by_cell),
        "paired_differences": ("metrics/paired_differences.parquet", analysis.paired),
        "operational": ("metrics/operational.parquet", analysis.operational),
    }
    per_turn = analysis.scan_per_turn
    if per_turn.collect_schema().names() and per_turn.select(pl.len()).collect().item():
        out["metrics_per_turn"] = ("metrics/metrics_per_turn.parquet", per_turn)
    return out


def write_raw(analysis: Analysis, folder: Path, only: set[str] | None = None) -> int:
    """One JSONL file per game (of those in ``only``), streamed from the journal one record at a time;
    returns the count."""
    s = analysis.sweep
    n = 0
    for rec in s.records(only):
        unit = rec["unit"]
        part = s.component(unit.get("game"), unit.get("condition"))
        lines = raw_lines(rec, part["config"] if part else None, part.get("prompts") if part else None, s.briefs(rec))
        with (folder / f"{unit['unit_id']}.jsonl").open("w") as f:
            f.writelines(json.dumps(line, default=str, ensure_ascii=False) + "\n" for line in lines)
        n += 1
    return n


def export(analysis: Analysis, out: Path) -> Path:
    """Write the dataset folder (replacing an earlier export) and return it."""
    s = analysis.sweep
    if out.exists():
        shutil.rmtree(out)
    (out / "raw").mkdir(parents=True)
    scope = raw_scope(analysis)
    write_raw(analysis, out / "raw", scope)
    written = {}
    for name, (rel, frame) in tables(analysis).items():
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        if isinstance(frame, pl.LazyFrame):
            frame.sink_parquet(out / rel, engine="streaming")
        else:
            frame.write_parquet(out / rel)
        written[name] = (rel, pl.scan_parquet(out / rel).select(pl.len()).collect().item())
    (out / "spec").mkdir()
    shutil.copyfile(s.path / MANIFEST, out / "spec" / MANIFEST)
    (out / "README.md").write_text(card(analysis, written, raw_complete=scope is None))
    return out
