"""Whole sweeps through the CLI: offline runs, resume after SIGKILL, refusals before spending."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import polars as pl
from helpers import ROOT

from bargain_ray.analysis.view import Follower, list_sweeps
from bargain_ray.store import read_progress
from bargain_ray.store.status import read_status

SWEEP = [sys.executable, "-m", "bargain_ray"]


def run(args: list[str], env: dict[str, str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run([*SWEEP, *args], env=env, cwd=ROOT, capture_output=True, text=True, timeout=300, **kw)


def journal(path: Path) -> list[dict]:
    """The complete lines of the journal (a kill may leave a torn last line, which resume cuts)."""
    data = (path / "journal.jsonl").read_bytes()
    return [json.loads(line) for line in data[: data.rfind(b"\n") + 1].splitlines()]


def test_demo_sweep_runs_offline_and_writes_the_contract_tables(tmp_path, sweep_env):
    out = run(["+grid=demo", f"run.dir={tmp_path}"], sweep_env)
    assert out.returncode == 0, out.stderr
    assert "statuses: AGREEMENT" in out.stdout and "tables: games.parquet 60 rows" in out.stdout
    assert (tmp_path / "report.html").exists() and (tmp_path / "dataset" / "README.md").exists()
    games = pl.read_parquet(tmp_path / "games.parquet")
    need = {"unit_id", "game", "condition", "pairing", "assignment", "seed", "block", "position",
            "first_speaker", "status", "known", "agreement"}
    assert need <= set(games.columns) and games.height == 60
    turns = pl.read_parquet(tmp_path / "turns.parquet")
    assert turns.height == games["calls_attempted"].sum()
    calls = pl.read_parquet(tmp_path / "calls.parquet")
    assert {"call_id", "unit_id", "role", "provider", "model", "request", "response_text", "latency_s",
            "attempts", "status"} <= set(calls.columns)
    again = run(["+grid=demo", f"run.dir={tmp_path}"], sweep_env)
    assert "0 to run" in again.stdout and len(journal(tmp_path)) == 60


def test_sigkilled_sweep_resumes_without_redoing_finished_games(tmp_path, sweep_env):
    args = ["+grid=demo", "grid.blocks=30", f"run.dir={tmp_path}", "run.batch_size=1", "run.max_in_flight=4",
            "run.progress=false", "run.report=false"]
    proc = subprocess.Popen([*SWEEP, *args], env=sweep_env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    path = tmp_path / "journal.jsonl"
    deadline = time.time() + 120
    while time.time() < deadline and (not path.exists() or path.read_bytes().count(b"\n") < 40):
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = journal(tmp_path)
    assert 40 <= len(before) < 600, "the kill must land part-way"
    out = run(args, sweep_env)
    assert out.returncode == 0, out.stderr
    assert f"{len(before)} finished" in out.stdout
    records = journal(tmp_path)
    finished = Counter(r["unit"]["unit_id"] for r in records if r["outcome"]["known"])
    assert max(finished.values()) == 1, "a finished game ran twice"
    games = pl.read_parquet(tmp_path / "games.parquet")
    assert games.height == 600 and games["unit_id"].n_unique() == 600
    assert set(games["unit_id"]) == set(finished)
    assert {r["unit"]["unit_id"] for r in before} <= set(games["unit_id"])


def test_a_live_sweep_reads_as_running_and_a_sigkilled_one_as_stopped(tmp_path, sweep_env):
    folder = tmp_path / "outputs" / "killed"
    args = ["+grid=demo", "grid.blocks=30", f"run.dir={folder}", "run.batch_size=1", "run.max_in_flight=2",
            "run.progress=false", "run.report=false"]
    proc = subprocess.Popen([*SWEEP, *args], env=sweep_env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.time() + 120
    while time.time() < deadline and not (folder / "journal.jsonl").exists():
        time.sleep(0.05)
    try:
        live = read_progress(folder)
        assert proc.poll() is None and read_status(folder).state == "running"
        assert live.running is not None and live.running.pid == proc.pid and live.running.checked
        assert [s["state"] for s in list_sweeps(folder.parent)] == ["running"]
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert json.loads((folder / "status.json").read_text())["state"] == "running", "a SIGKILL leaves running behind"
    dead = read_progress(folder)
    assert read_status(folder).state == dead.state == "stopped" and dead.running is None
    assert dead.note().startswith("partial: its driver stopped without ending it (killed or crashed); ")
    assert [s["state"] for s in list_sweeps(folder.parent)] == ["stopped"]
    view = Follower(folder).snapshot()
    assert not view.running and view.state == "stopped"


def test_changed_game_config_is_refused_on_resume(tmp_path, sweep_env):
    base = ["+grid=demo", "grid.blocks=1", f"run.dir={tmp_path}", "run.report=false"]
    assert run(base, sweep_env).returncode == 0
    out = run([*base, "games.tickets.max_turns=10"], sweep_env)
    assert out.returncode != 0
    assert "games.tickets.max_turns 12 → 10" in out.stderr and "run.dir=" in out.stderr
    out = run([*base, "run.workers=1"], sweep_env)
    assert out.returncode == 0, "runtime knobs never block a resume"


def test_missing_key_stops_before_any_call(tmp_path, sweep_env):
    out = run(["+grid=c3_full", f"run.dir={tmp_path}"], sweep_env)
    assert out.returncode != 0
    assert "ANTHROPIC_API_KEY is not set" in out.stderr and "provider=sim" in out.stderr
    assert not (tmp_path / "journal.jsonl").exists()


def test_bad_config_is_refused_with_a_clear_error(tmp_path, sweep_env):
    out = run(["+grid=demo", f"run.dir={tmp_path}", "grid.designs.0.pairings=[BX]"], sweep_env)
    assert out.returncode != 0 and "no model for letter 'X'" in out.stderr
    out = run([f"run.dir={tmp_path}"], sweep_env)
    assert out.returncode != 0 and "+grid=demo" in out.stderr


def test_dry_run_spends_nothing(tmp_path, sweep_env):
    out = run(["+grid=c3_full", f"run.dir={tmp_path}", "run.dry_run=true"], sweep_env)
    assert out.returncode == 0 and "640 units" in out.stdout
    assert not (tmp_path / "journal.jsonl").exists()


def test_turn_level_resume_replays_journaled_calls_and_pays_only_for_new_ones(tmp_path, sweep_env):
    args = ["+grid=demo", "grid.blocks=30", f"run.dir={tmp_path / 'killed'}", "run.batch_size=1",
            "run.max_in_flight=8", "run.progress=false", "run.journal_calls=true", "run.report=false"]
    proc = subprocess.Popen([*SWEEP, *args], env=sweep_env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    path = tmp_path / "killed" / "journal.jsonl"
    deadline = time.time() + 120
    while time.time() < deadline and (not path.exists() or path.read_bytes().count(b"\n") < 40):
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    finished = {r["unit"]["unit_id"] for r in journal(tmp_path / "killed")}
    paid = [json.loads(line) for line in (tmp_path / "killed" / "calls.journal.jsonl").read_bytes().splitlines()]
    interrupted = {e["call_id"] for e in paid if e["unit_id"] not in finished}
    assert interrupted, "the kill must land while games are part-way"

    assert run(args, sweep_env).returncode == 0
    calls = pl.read_parquet(tmp_path / "killed" / "calls.parquet")
    resumed = set(calls.filter(pl.col("resumed"))["call_id"])
    assert resumed == interrupted, "every journaled call of an interrupted game is replayed, and only those"
    paid_again = [json.loads(line)["call_id"] for line in (tmp_path / "killed" / "calls.journal.jsonl").read_bytes().splitlines()]
    assert len(paid_again) == len(set(paid_again)), "no call was made twice"

    whole = ["+grid=demo", "grid.blocks=30", f"run.dir={tmp_path / 'whole'}", "run.progress=false", "run.report=false"]
    assert run(whole, sweep_env).returncode == 0
    a = pl.read_parquet(tmp_path / "killed" / "games.parquet").select("unit_id", "outcome").sort("unit_id")
    b = pl.read_parquet(tmp_path / "whole" / "games.parquet").select("unit_id", "outcome").sort("unit_id")
    assert a.equals(b), "a resumed sweep ends exactly as an uninterrupted one"
