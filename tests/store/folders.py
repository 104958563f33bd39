"""Real sweep folders played in-process (strategy agents, no Ray), and the CLIs run on them, for the store's tests."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from itertools import islice
from pathlib import Path

from helpers import ROOT

from bargain_ray.design import ResolvedSweep, load_config, units
from bargain_ray.execution.plan import describe
from bargain_ray.execution.worker import GameRunner
from bargain_ray.store import GameJournal, open_manifest


def play_demo(path: Path, count: int, overrides: list[str] | None = None) -> ResolvedSweep:
    """The first ``count`` units of the demo grid played into the sweep folder ``path``."""
    sweep = load_config("demo", [f"run.dir={path}", *(overrides or [])])
    manifest = open_manifest(path, describe(sweep, "20261201"))
    runner = GameRunner(sweep.model_dump(mode="json"))
    journal = GameJournal(path)
    for u in islice(units(sweep, manifest.created), count):
        journal.append_many([asyncio.run(runner.play(u))])
    journal.close()
    return sweep


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=120, env=env)
