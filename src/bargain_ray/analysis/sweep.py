"""A sweep folder as analysis sees it: manifest, the latest record of each unit, the tables."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from bargain_ray.core.hashing import digest
from bargain_ray.games import load_game
from bargain_ray.games.base import Game
from bargain_ray.store import MANIFEST, read_manifest, read_records, read_tables


@dataclass(frozen=True)
class Sweep:
    path: Path
    manifest: dict[str, Any]
    records: list[dict[str, Any]]
    """The latest journaled record of each unit, in journal order."""
    games: pl.DataFrame
    turns: pl.DataFrame
    calls: pl.DataFrame
    _games: dict[str, Game] = field(default_factory=dict, repr=False)

    @property
    def name(self) -> str:
        return self.manifest.get("grid") or self.path.name

    def game_config(self, unit: dict[str, Any]) -> dict[str, Any] | None:
        """The game config a unit was played under, as the manifest fixed it."""
        part = self.manifest.get("components", {}).get(f"game {unit.get('game')} under condition {unit.get('condition')}")
        return part["config"] if part else None

    def briefs(self, record: dict[str, Any]) -> dict[str, tuple[str, bool]]:
        """role -> (private system prompt, whether it was sent): as recorded in the role's first
        request, or rebuilt from the engine for roles that received no request (strategy agents,
        or a game that ended before the role was asked)."""
        out: dict[str, tuple[str, bool]] = {}
        for c in record["calls"]:
            system = sent_system(c.get("request") or {})
            if c["role"] not in out and system:
                out[c["role"]] = (system, True)
        config = self.game_config(record["unit"])
        if config is None:
            return out
        game = self._games.setdefault(digest(config), load_game(config))
        unit = record["unit"]
        state = game.start(unit.get("seed", 0), unit.get("first_speaker"))
        return {role: out.get(role) or (game.prompt(state, role).system, False) for role in game.roles}


def sent_system(request: dict[str, Any]) -> str | None:
    """The system prompt of a request as sent: Anthropic's ``system``, or OpenAI's first system message."""
    if request.get("system"):
        return request["system"]
    first = (request.get("messages") or [{}])[0]
    return first.get("content") if first.get("role") in ("system", "developer") else None


def read_sweep(path: Path) -> Sweep:
    """Read a sweep folder; the parquet tables are rebuilt from the journal if absent."""
    path = Path(path)
    if not (path / MANIFEST).exists():
        raise FileNotFoundError(f"{path} is not a sweep folder: no {MANIFEST}")
    latest: dict[str, dict[str, Any]] = {}
    for rec in read_records(path):
        latest.pop(rec["unit"]["unit_id"], None)
        latest[rec["unit"]["unit_id"]] = rec
    return Sweep(path=path, manifest=read_manifest(path), records=list(latest.values()), **read_tables(path))
