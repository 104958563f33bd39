"""A sweep folder as analysis sees it: the manifest, the tables as lazy scans, the journal streamed.

Nothing here holds every record: the tables are scanned (``scan``), and records are read one at a
time from the journal (``records``), the latest of each unit only.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from bargain_ray.core.hashing import digest
from bargain_ray.games import load_game
from bargain_ray.games.base import Game
from bargain_ray.store import MANIFEST, read_manifest, read_records, scan_tables


@dataclass(frozen=True)
class Sweep:
    path: Path
    manifest: dict[str, Any]
    tables: dict[str, pl.LazyFrame]
    _games: dict[str, Game] = field(default_factory=dict, repr=False)

    @property
    def name(self) -> str:
        return self.manifest.get("grid") or self.path.name

    def scan(self, table: str) -> pl.LazyFrame:
        """``games``, ``turns`` or ``calls`` as a lazy scan."""
        return self.tables[table]

    @property
    def games(self) -> pl.DataFrame:
        return self.scan("games").collect()

    @property
    def turns(self) -> pl.DataFrame:
        return self.scan("turns").collect()

    @property
    def calls(self) -> pl.DataFrame:
        return self.scan("calls").collect()

    def records(self, only: set[str] | None = None) -> Iterator[dict[str, Any]]:
        """The latest journaled record of each unit (of those in ``only``), in journal order, one at a time."""
        latest: dict[str, int] = {}
        for i, rec in enumerate(read_records(self.path)):
            if only is None or rec["unit"]["unit_id"] in only:
                latest[rec["unit"]["unit_id"]] = i
        keep = set(latest.values())
        for i, rec in enumerate(read_records(self.path)):
            if i in keep:
                yield rec

    def component(self, game: str | None, condition: str | None) -> dict[str, Any] | None:
        return self.manifest.get("components", {}).get(f"game {game} under condition {condition}")

    def game_config(self, unit: dict[str, Any]) -> dict[str, Any] | None:
        """The game config a unit was played under, as the manifest fixed it."""
        part = self.component(unit.get("game"), unit.get("condition"))
        return part["config"] if part else None

    def game_of(self, config: dict[str, Any]) -> Game:
        """The game bound to ``config``, loaded once per config."""
        key = digest(config)
        if key not in self._games:
            self._games[key] = load_game(config)
        return self._games[key]

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
        game = self.game_of(config)
        if all(role in out for role in game.roles):
            return {role: out[role] for role in game.roles}
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
    """Read a sweep folder; the parquet tables are rebuilt (in memory) from the journal if absent."""
    path = Path(path)
    if not (path / MANIFEST).exists():
        raise FileNotFoundError(f"{path} is not a sweep folder: no {MANIFEST}")
    return Sweep(path=path, manifest=read_manifest(path), tables=scan_tables(path))
