"""The dataset export in seed 002's layout: raw JSONL per game, parquet tables, a card.

``raw/`` is the archival truth (header, turns with their calls, result); ``data/``
and ``metrics/`` are derived and can be regenerated from it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from bargain_ray.analysis.build import Analysis
from bargain_ray.analysis.card import card
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
    lines.append({"type": "result", **record["outcome"]})
    return lines


def tables(analysis: Analysis) -> dict[str, Any]:
    """config name -> (relative parquet path, frame), in card order."""
    s = analysis.sweep
    out = {
        "games": ("data/games.parquet", s.games),
        "turns": ("data/turns.parquet", s.turns),
        "calls": ("data/calls.parquet", s.calls),
        "metrics_per_game": ("metrics/metrics_per_game.parquet", analysis.per_game),
        "metrics_by_cell": ("metrics/metrics_by_cell.parquet", analysis.by_cell),
        "paired_differences": ("metrics/paired_differences.parquet", analysis.paired),
        "operational": ("metrics/operational.parquet", analysis.operational),
    }
    if analysis.per_turn.height:
        out["metrics_per_turn"] = ("metrics/metrics_per_turn.parquet", analysis.per_turn)
    return out


def export(analysis: Analysis, out: Path) -> Path:
    """Write the dataset folder (replacing an earlier export) and return it."""
    s = analysis.sweep
    if out.exists():
        shutil.rmtree(out)
    (out / "raw").mkdir(parents=True)
    for rec in s.records:
        unit = rec["unit"]
        config = s.game_config(unit)
        part = s.manifest.get("components", {}).get(f"game {unit.get('game')} under condition {unit.get('condition')}")
        lines = raw_lines(rec, config, part.get("prompts") if part else None, s.briefs(rec))
        with (out / "raw" / f"{unit['unit_id']}.jsonl").open("w") as f:
            f.writelines(json.dumps(line, default=str, ensure_ascii=False) + "\n" for line in lines)
    written = tables(analysis)
    for rel, frame in written.values():
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        frame.write_parquet(out / rel)
    (out / "spec").mkdir()
    shutil.copyfile(s.path / MANIFEST, out / "spec" / MANIFEST)
    (out / "README.md").write_text(card(analysis, {k: (rel, f.height) for k, (rel, f) in written.items()}))
    return out
