"""The settings of the simulated provider each run of a folder played under, as the rehearsal note states them.

Provider settings are runtime knobs (no manifest holds them), yet ``reply_noise`` decides what a rehearsal's
intervals mean: 0 answers each request with the model's strategy exactly, above 0 draws it around that strategy.
Each run on the simulated provider appends the value it plays with, so a folder resumed under another value says so.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel

from bargain_ray.store.jsonl import encode_line, read_lines
from bargain_ray.store.paths import SIM_RUNS


class SimRun(BaseModel):
    """One run of the folder on the simulated provider."""

    at: str
    reply_noise: float


def record_sim_run(path: Path, reply_noise: float) -> None:
    """Append the reply noise this run plays with (before its first game)."""
    line = SimRun(at=datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC"), reply_noise=reply_noise)
    with (path / SIM_RUNS).open("ab") as f:
        f.write(encode_line(line))
        f.flush()
        os.fsync(f.fileno())


def read_reply_noise(path: Path) -> list[float]:
    """Each reply noise the folder's runs on the simulated provider played with, in the order first used."""
    return list(dict.fromkeys(run.reply_noise for run in read_lines(path / SIM_RUNS, SimRun.model_validate_json)))
