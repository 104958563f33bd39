"""A sweep folder as analysis sees it: manifest, the latest record of each unit, the tables."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from bargain_ray.store import MANIFEST, SweepStore


@dataclass(frozen=True)
class Sweep:
    path: Path
    manifest: dict[str, Any]
    records: list[dict[str, Any]]
    """The latest journaled record of each unit, in journal order."""
    games: pl.DataFrame
    turns: pl.DataFrame
    calls: pl.DataFrame

    @property
    def name(self) -> str:
        return self.manifest.get("grid") or self.path.name

    def game_config(self, unit: dict[str, Any]) -> dict[str, Any] | None:
        """The game config a unit was played under, as the manifest fixed it."""
        part = self.manifest.get("components", {}).get(f"game {unit.get('game')} under condition {unit.get('condition')}")
        return part["config"] if part else None


def load(path: Path) -> Sweep:
    """Read a sweep folder; the parquet tables are rebuilt from the journal if absent."""
    path = Path(path)
    if not (path / MANIFEST).exists():
        raise FileNotFoundError(f"{path} is not a sweep folder: no {MANIFEST}")
    store = SweepStore(path)
    latest: dict[str, dict[str, Any]] = {}
    for rec in store.records():
        latest.pop(rec["unit"]["unit_id"], None)
        latest[rec["unit"]["unit_id"]] = rec
    if not all((path / f"{n}.parquet").exists() for n in ("games", "turns", "calls")):
        store.write_tables()
    tables = {n: pl.read_parquet(path / f"{n}.parquet") for n in ("games", "turns", "calls")}
    return Sweep(
        path=path,
        manifest=json.loads((path / MANIFEST).read_text()),
        records=list(latest.values()),
        **tables,
    )
