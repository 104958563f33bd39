"""A sweep folder as analysis sees it: the manifest, the tables as lazy scans, the journal streamed.

Nothing here holds every record: the tables are scanned (``scan``), and records are read one at a
time from the journal (``records``), the latest of each unit only. The manifest and the records are
the models the driver wrote (``Manifest``, ``GameRecord``), parsed from the folder's bytes.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import polars as pl

from bargain_ray.core.records import GameRecord
from bargain_ray.core.unit import Unit
from bargain_ray.design.fingerprint import game_part
from bargain_ray.games import load_game
from bargain_ray.games.base import Game
from bargain_ray.store import MANIFEST, index_latest, read_at, read_manifest, scan_tables
from bargain_ray.store.manifest import Manifest


@dataclass(frozen=True)
class Sweep:
    path: Path
    manifest: Manifest
    tables: dict[str, pl.LazyFrame]
    _games: dict[str, Game | None] = field(default_factory=dict, repr=False)
    _journal: dict[str, dict[str, int]] = field(default_factory=dict, repr=False)

    @property
    def name(self) -> str:
        """The folder's name, as the reader opened it (``c3_full-sim``); the grid it played is ``manifest.grid``."""
        return self.path.resolve().name

    def roles(self, games: list[str] | None = None) -> list[str]:
        """Every role of the sweep's game configs (of those in ``games``), in the grid's order: the roles whose
        ``<role>_model`` column says who played them, and whose calls the tables hold."""
        out: dict[str, None] = {}
        for game, condition in self.manifest.game_conditions():
            loaded = self.game_for(game, condition) if games is None or game in games else None
            out |= dict.fromkeys(loaded.roles if loaded else ())
        return list(out)

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

    def records(self, only: set[str] | None = None) -> Iterator[GameRecord]:
        """The latest journaled record of each unit (of those in ``only``), in journal order, one at a time."""
        if "index" not in self._journal:
            self._journal["index"] = index_latest(self.path)  # once per sweep read: unit -> its latest line
        latest = self._journal["index"]
        return read_at(self.path, sorted(o for u, o in latest.items() if only is None or u in only))

    def game_config(self, unit: Unit) -> dict[str, Any] | None:
        """The game config a unit was played under, as the manifest fixed it."""
        part = game_part(self.manifest.components, unit.game, unit.condition)
        return part["config"] if part else None

    def game_for(self, game: str, condition: str) -> Game | None:
        """The game a unit of ``game`` under ``condition`` was played as (from the manifest), loaded once."""
        key = f"{game} under {condition}"
        if key not in self._games:
            part = game_part(self.manifest.components, game, condition)
            self._games[key] = load_game(part["config"]) if part else None
        return self._games[key]

    def briefs(self, record: GameRecord) -> dict[str, tuple[str, bool]]:
        """role -> (private system prompt, whether it was sent): as recorded in the role's first
        request, or rebuilt from the engine for roles that received no request (strategy agents,
        or a game that ended before the role was asked)."""
        out: dict[str, tuple[str, bool]] = {}
        for c in record.calls:
            system = sent_system(c.request)
            if c.role not in out and system:
                out[c.role] = (system, True)
        unit = record.unit
        game = self.game_for(unit.game, unit.condition)
        if game is None:
            return out
        if any(role not in out for role in game.roles):
            rebuilt = dict(_rebuilt_briefs(game, unit.seed, unit.first_speaker))
            out = {role: out.get(role) or (rebuilt[role], False) for role in game.roles}
        return {role: out[role] for role in game.roles}


@lru_cache(maxsize=4096)
def _rebuilt_briefs(game: Game, seed: int, first_speaker: str | None) -> tuple[tuple[str, str], ...]:
    """Each role's brief as the engine renders it at the start (the same for every cell of a seed)."""
    state = game.start(seed, first_speaker)
    return tuple((role, game.prompt(state, role).system) for role in game.roles)


def sent_system(request: dict[str, Any]) -> str | None:
    """The system prompt of a request as sent: Anthropic's ``system``, or OpenAI's first system message
    (the request is the provider's free-form body, so it stays JSON)."""
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
