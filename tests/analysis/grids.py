"""Demo grids played in-process (strategy agents, no Ray) into real sweep folders, and headless Chromium's DOM."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from itertools import islice
from pathlib import Path

from bargain_ray.config import SweepConfig, compose_dict
from bargain_ray.design import resolve, units
from bargain_ray.execution.plan import describe
from bargain_ray.execution.worker import GameRunner
from bargain_ray.store import GameJournal, open_manifest, write_status, write_tables


def play_grid(grid: str, path: Path, limit: int | None = None, overrides: tuple[str, ...] = ()) -> SweepConfig:
    """The units of a demo grid (the first ``limit``) played in-process into a sweep folder that reads as ended."""
    sweep = resolve(compose_dict("config", [f"+grid={grid}", *overrides]))
    manifest = open_manifest(path, describe(sweep, "20261201"))
    runner = GameRunner(sweep.model_dump(mode="json"))
    todo = list(islice(units(sweep, manifest.created), limit))

    async def play_all():
        return await asyncio.gather(*(runner.play(u) for u in todo))

    journal = GameJournal(path)
    journal.append_many(asyncio.run(play_all()))
    journal.close()
    write_status(path, "ended", len(todo))
    write_tables(path)
    return sweep


def dom(url: str, profile: Path, budget_ms: int = 0) -> str:
    """The page's DOM once its scripts ran (``budget_ms`` of virtual time for a page that polls)."""
    chromium = shutil.which("chromium")
    assert chromium, "Debian's chromium is required: apt-get install -y chromium"
    budget = [f"--virtual-time-budget={budget_ms}"] if budget_ms else []
    return subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         f"--user-data-dir={profile}", *budget, "--dump-dom", url],
        capture_output=True, text=True, timeout=120, check=True,
    ).stdout
