"""SIGTERM and SIGINT stop a sweep like Ctrl-C (tables written, exit 143/130); unknown games exit non-zero."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest
from helpers import ROOT, assert_summary_sums, complete_lines

from bargain_ray.__main__ import main
from bargain_ray.config import compose_dict
from bargain_ray.core.status import ExitCode
from bargain_ray.design import resolve
from bargain_ray.execution.signals import stop_on_signals
from bargain_ray.execution.sweep import run_sweep
from bargain_ray.providers.sim import SimServer, SimSettings
from bargain_ray.providers.sim.config import Latency
from bargain_ray.store import CALLS_JOURNAL, JOURNAL


def sweep_args(url: str, folder: Path) -> list[str]:
    return [sys.executable, "-m", "bargain_ray", "+grid=c3_smoke", "provider=sim", f"provider.settings.base_url={url}",
            f"run.dir={folder}", "run.progress=false", "run.report=false"]


def slow_sim(seed: int) -> SimServer:
    """The sim with replies slow enough (0.3 s median) that a signal lands mid-sweep."""
    return SimServer(SimSettings(seed=seed, latency=Latency(median_s=0.3)))


def stop_midway(url: str, folder: Path, env: dict[str, str], signum: int, games: int) -> subprocess.CompletedProcess:
    """Start the CLI sweep, send ``signum`` once ``games`` games are journaled, and wait for it to end."""
    proc = subprocess.Popen(sweep_args(url, folder), env=env, cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 240
    while proc.poll() is None and time.time() < deadline and complete_lines(folder / JOURNAL) < games:
        time.sleep(0.05)
    assert proc.poll() is None, "the sweep ended before the signal: " + proc.stderr.read()[-2000:]
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=120)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def assert_quiet(stderr: str) -> None:
    """Nothing from any component on the terminal at a stop: no traceback, no Ray error dump."""
    assert "Traceback" not in stderr and "Unhandled error" not in stderr and "ERROR" not in stderr, stderr[-3000:]


def test_a_signal_sets_the_stop_flag_and_a_second_one_stops_now() -> None:
    before = signal.getsignal(signal.SIGTERM)
    with stop_on_signals() as stop:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.05)
        assert stop.requested and stop.name == "SIGTERM" and stop.exit_code == 143
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)
    assert signal.getsignal(signal.SIGTERM) is before


def test_sigterm_mid_sweep_writes_the_tables_and_resumes_to_every_unit_once(sweep_env, tmp_path, capsys) -> None:
    with slow_sim(5) as url:
        done = stop_midway(url, tmp_path, sweep_env, signal.SIGTERM, games=2)
        assert done.returncode == 143, done.stderr[-3000:]
        journaled = {json.loads(line)["unit"]["unit_id"] for line in (tmp_path / JOURNAL).read_bytes().splitlines()}
        games = pl.read_parquet(tmp_path / "games.parquet")
        assert 2 <= games.height == len(journaled) < 16, "the tables hold every game journaled before the stop"
        paid = complete_lines(tmp_path / CALLS_JOURNAL)
        assert f"paid now: {paid} calls," in done.stdout, "the summary's paid figure is the call journal's"
        assert assert_summary_sums(done.stdout)[0] == paid, "the per-model lines sum to it"
        assert_quiet(done.stderr)
        last = done.stdout.strip().splitlines()[-1]
        assert re.fullmatch(rf"{16 - games.height} games unknown: .*stopped by SIGTERM; run the same command "
                            "again to resume", last), last

    with SimServer(SimSettings(seed=5)) as url:  # the resume needs no slow replies: in-process, on a fast sim
        assert main(sweep_args(url, tmp_path)[3:]) == ExitCode.OK
    assert capsys.readouterr().out.strip().splitlines()[-1] == "every game has a known result"
    games = pl.read_parquet(tmp_path / "games.parquet")
    assert games.height == 16 and games["unit_id"].n_unique() == 16 and games["known"].all()
    calls = [json.loads(line)["call_id"] for line in (tmp_path / CALLS_JOURNAL).read_bytes().splitlines()]
    assert len(calls) == len(set(calls)), "a reply paid before the stop is replayed, never paid again"


def test_sigint_mid_sweep_exits_130_with_the_tables(sweep_env, tmp_path) -> None:
    with slow_sim(6) as url:
        done = stop_midway(url, tmp_path, sweep_env, signal.SIGINT, games=1)
    assert done.returncode == 130, done.stderr[-3000:]
    assert pl.read_parquet(tmp_path / "games.parquet").height == complete_lines(tmp_path / JOURNAL)
    paid = complete_lines(tmp_path / CALLS_JOURNAL)
    assert assert_summary_sums(done.stdout)[0] == paid, "per model and in total: the journal's"
    assert_quiet(done.stderr)
    assert "stopped by SIGINT" in done.stdout.strip().splitlines()[-1]


def test_an_unreachable_provider_leaves_every_game_unknown_and_says_why(ray_session, tmp_path, capsys) -> None:
    overrides = ["+grid=c3_smoke", "provider=sim", "provider.settings.base_url=http://127.0.0.1:9",
                 f"run.dir={tmp_path}", "run.progress=false", "run.report=false",
                 "models.O.retry.max_attempts=1", "models.H.retry.max_attempts=1"]
    assert run_sweep(resolve(compose_dict("config", overrides))) == ExitCode.UNKNOWN_GAMES
    out = capsys.readouterr().out
    # the summary in this ending (test_progress.py checks it in a finished one): per model it sums to its totals,
    # which are the call journal's; nothing is paid, and two lines count 8 calls failed after their retries
    calls, _ = assert_summary_sums(out)
    paid = sum(b'"reply"' in line for line in (tmp_path / CALLS_JOURNAL).read_bytes().splitlines()) \
        if (tmp_path / CALLS_JOURNAL).exists() else 0
    assert calls == paid == 0, "the paid figure is the call journal's"
    assert out.count("0 calls paid, 0 replayed free, 8 failed after their retries") == 2, out
    last = out.strip().splitlines()[-1]
    assert last == ("16 games unknown: 16 connection errors (provider unreachable?); "
                    "run the same command again to retry them")
