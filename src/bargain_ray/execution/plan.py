"""The plan of a sweep: its manifest, the units already finished, and the ones still to play."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

from bargain_ray.config import SweepConfig
from bargain_ray.core.unit import Unit
from bargain_ray.design import components, units
from bargain_ray.store import finished_units, open_manifest


def git_commit() -> str | None:
    """The commit of the code that runs the sweep, for the dataset's provenance."""
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=Path(__file__).parent)
    except OSError:
        return None
    return out.stdout.strip() or None


def plan(sweep: SweepConfig, path: Path) -> tuple[Callable[[], Iterator[Unit]], int, set[str]]:
    """(a fresh iterator over the units still to play, how many, the ids already finished)."""
    manifest = open_manifest(path, sweep.grid.name, components(sweep), {"git_commit": git_commit()})
    done = set(finished_units(path))

    def todo() -> Iterator[Unit]:
        return (u for u in units(sweep, manifest["created"]) if u.unit_id not in done)

    return todo, sum(1 for _ in todo()), done
