"""Chaos: SIGKILL the driver at random moments of one sweep, resume each time.

The simulated provider is served from a thread of the test's process, so it
outlives the kills and its log counts every reply it served: the calls paid
twice are the replies served beyond the calls the finished sweep recorded.

The killed drivers are CLI processes on the session's Ray, a cluster that outlives them; the final resume
and the uninterrupted sweep run in-process (the CLI's ``main``). The cluster's limiter outlives the kills
too, so each resume also shows it gave a killed driver's slots back (before it did, a kill that left the
window full stalled the next driver for the 15-minute lease: seen here as a 300 s timeout).
"""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest
from helpers import ROOT, complete_lines

from bargain_ray.__main__ import main
from bargain_ray.providers.sim import SimServer, SimSettings

IN_FLIGHT = 8
KILLS = 3
GAMES = 32
"""Two blocks of the C3 rehearsal, about 150 calls: every one of the kills (6, 32 and 48 journal lines into each
invocation) lands mid-sweep."""


def served(server: SimServer) -> int:
    return sum(1 for entry in server.log if entry.status == 200)


@pytest.fixture(scope="module")
def sim():
    """The simulated provider with its default settings (as ``python -m bargain_ray.providers.sim`` serves it), on a
    thread of this process: no driver the test kills takes it down."""
    server = SimServer(SimSettings())
    with server as url:
        yield server, url


def sweep_args(url: str, folder: Path) -> list[str]:
    return [sys.executable, "-m", "bargain_ray", "+grid=c3_smoke", f"grid.blocks={GAMES // 16}", "provider=sim",
            f"provider.settings.base_url={url}", f"run.dir={folder}", f"run.max_in_flight={IN_FLIGHT}",
            "run.games_per_task=1", "run.progress=false", "run.report=false"]


def test_driver_killed_at_random_moments_ends_as_an_uninterrupted_sweep(tmp_path, sim, sweep_env):
    server, sim_url = sim
    rng = random.Random(20261129)
    chaos = tmp_path / "chaos"
    before = served(server)
    kills = 0
    for _ in range(KILLS):
        start = complete_lines(chaos / "calls.journal.jsonl")
        target = start + rng.randint(5, 60)
        proc = subprocess.Popen(sweep_args(sim_url, chaos), env=sweep_env, cwd=ROOT,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 120
        while proc.poll() is None and time.time() < deadline and complete_lines(chaos / "calls.journal.jsonl") < target:
            time.sleep(0.01)
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            kills += 1
        proc.wait()
    assert main(sweep_args(sim_url, chaos)[3:]) == 0
    paid = served(server) - before
    assert main(sweep_args(sim_url, tmp_path / "whole")[3:]) == 0
    assert kills >= 1, "at least one kill must land mid-sweep"

    a = pl.read_parquet(chaos / "games.parquet").sort("unit_id")
    b = pl.read_parquet(tmp_path / "whole" / "games.parquet").sort("unit_id")
    assert a.height == b.height == GAMES and a["unit_id"].n_unique() == GAMES
    assert a.select("unit_id", "status", "outcome").equals(b.select("unit_id", "status", "outcome"))
    untimed = ("call_ids", "sent_at", "answered_at")  # when a turn's calls went out differs between two runs
    assert pl.read_parquet(chaos / "turns.parquet").drop(untimed).sort("unit_id", "turn").equals(
        pl.read_parquet(tmp_path / "whole" / "turns.parquet").drop(untimed).sort("unit_id", "turn"))

    recorded = pl.read_parquet(chaos / "calls.parquet").height
    paid_twice = paid - recorded
    print(f"kills={kills} calls={recorded} paid={paid} paid_twice={paid_twice} bound={kills * IN_FLIGHT}")
    assert 0 <= paid_twice <= kills * IN_FLIGHT
