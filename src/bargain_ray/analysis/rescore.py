"""Recompute every per-game and per-turn figure of a sweep folder from its journal, with this code.

Figures are computed when a game ends and journaled with it; a metric fixed or added later would leave
every earlier game with the old figures or none. ``rescore_folder`` reads each game's typed record from
the journal, computes its figures again under the game config the manifest fixed (``play.loop.with_figures``,
the code a game's end runs), and publishes them as a new table generation through the store's one table
publishing (tables as a set); the journals are never written. The manifest records which code computed
that generation (``Manifest.refigured``), so a reader knows (``read_figures``) whether the figures it sees
are the journal's or were recomputed, and by which commit. A running driver's folder is refused (its lock).
"""

from __future__ import annotations

from datetime import UTC, datetime
from functools import cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from bargain_ray.core.provenance import CodeVersion, describe, read_code_version
from bargain_ray.core.records import GameRecord
from bargain_ray.design.fingerprint import game_part
from bargain_ray.games import Game, load_game
from bargain_ray.play.loop import with_figures
from bargain_ray.store import MANIFEST, hold_lock, read_manifest
from bargain_ray.store.manifest import Manifest, Refigured, write_manifest
from bargain_ray.store.tables import new_generation, published_generation, write_tables


class NotASweep(FileNotFoundError):
    """The path holds no sweep (no manifest)."""


class Figures(BaseModel):
    """Which code computed the figures of a folder's published tables: what the report says of them."""

    model_config = ConfigDict(frozen=True)

    refigured: bool
    """The published tables' figures were recomputed by ``rescore`` (else each game's are its journal line's)."""
    code: CodeVersion | None
    """The code that recomputed them (None when not refigured, or not a git checkout)."""
    sweep_commit: str | None
    """The commit the sweep started with (``Manifest.git_commit``)."""
    sweep_diff: str | None = None
    """Its uncommitted changes' hash (``Manifest.git_diff``)."""

    @property
    def by_other_code(self) -> bool:
        """The figures were computed by code other than the sweep's: another commit, other (or unhashed) local
        changes, or a commit that cannot be told (either side not a git checkout)."""
        if not self.refigured:
            return False
        code = self.code
        return (code is None or code.commit != self.sweep_commit
                or (code.dirty and (code.diff is None or code.diff != self.sweep_diff))
                or (not code.dirty and self.sweep_diff is not None))

    def commits(self) -> tuple[str, str]:
        """(the code that computed the figures, the sweep's), as a reader is told them."""
        return self.code.describe() if self.code else "code outside git", describe(self.sweep_commit, self.sweep_diff)

    def note(self) -> str | None:
        """One line naming both commits when the figures were computed by code other than the sweep's, else None."""
        if not self.by_other_code:
            return None
        by, sweep = self.commits()
        return (f"Figures recomputed by code other than the sweep's: python -m bargain_ray.rescore computed every "
                f"per-game and per-turn figure with {by}; the sweep's games were played and scored with {sweep}. "
                "The journals are unchanged.")


class Rescored(BaseModel):
    """What one rescore did."""

    model_config = ConfigDict(frozen=True)

    path: Path
    generation: str
    games: int
    """Journaled games whose figures were recomputed (known games; unknown ones have none)."""
    kept: int
    """Games whose game config the manifest does not hold, tabled with their journaled figures."""
    rows: dict[str, int]
    figures: Figures


def read_figures(path: Path, manifest: Manifest | None = None) -> Figures:
    """Which code computed the figures a reader of ``path`` sees now."""
    manifest = manifest or read_manifest(path)
    refigured = manifest.refigured
    current = refigured is not None and published_generation(path) == refigured.generation
    return Figures(refigured=current, code=refigured.code if current and refigured else None,
                   sweep_commit=manifest.git_commit, sweep_diff=manifest.git_diff)


def rescore_folder(path: Path) -> Rescored:
    """Recompute and publish every figure of the sweep folder ``path`` while holding its lock; ``FolderLocked``
    when a driver holds it, ``NotASweep`` when it is no sweep folder."""
    path = Path(path)
    if not (path / MANIFEST).exists():
        raise NotASweep(f"{path} is not a sweep folder: no {MANIFEST}")
    with hold_lock(path):
        manifest = read_manifest(path)
        code = read_code_version(manifest.key_names())
        generation = new_generation()
        now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
        manifest = manifest.model_copy(update={"refigured": Refigured(generation=generation, code=code, at=now)})
        write_manifest(path, manifest)  # first: a kill before the tables leaves this generation unpublished
        counts = {"games": 0, "kept": 0}

        @cache
        def game_of(game: str, condition: str) -> Game | None:
            part = game_part(manifest.components, game, condition)
            return load_game(part["config"]) if part and part.get("config") else None

        def refigure(record: GameRecord) -> GameRecord:
            game = game_of(record.unit.game, record.unit.condition)
            if game is None:
                counts["kept"] += 1
                return record
            counts["games"] += record.outcome.known
            return with_figures(game, record)

        rows = write_tables(path, refigure=refigure, generation=generation)
    return Rescored(path=path, generation=generation, games=counts["games"], kept=counts["kept"], rows=rows,
                    figures=read_figures(path, manifest))
