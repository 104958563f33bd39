"""Whole sweeps through the CLI: offline runs, resume after SIGKILL, refusals before spending.

A subprocess where the test is about the process (its output, a SIGKILL); the CLI's ``main`` in-process on the
session's Ray for the runs and refusals around it."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest
from helpers import DEMO_WHOLE, ROOT, complete_lines, read_journal, read_undated

from bargain_ray.__main__ import main
from bargain_ray.analysis.view import Follower, list_sweeps
from bargain_ray.execution import pool as pools
from bargain_ray.store import read_manifest, read_progress
from bargain_ray.store.status import read_status

SWEEP = [sys.executable, "-m", "bargain_ray"]


def run(args: list[str], env: dict[str, str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run([*SWEEP, *args], env=env, cwd=ROOT, capture_output=True, text=True, timeout=300, **kw)


def kill_after(args: list[str], env: dict[str, str], path: Path, games: int,
               live: Callable[[subprocess.Popen], None] | None = None) -> None:
    """Start the CLI sweep and SIGKILL it once ``path`` (a journal) has ``games`` lines; ``live(proc)`` first, once
    ``path`` exists (the sweep has started playing)."""
    proc = subprocess.Popen([*SWEEP, *args], env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.time() + 120
    try:
        if live is not None:
            while time.time() < deadline and not path.exists():
                time.sleep(0.02)
            live(proc)
        while time.time() < deadline and complete_lines(path) < games:
            time.sleep(0.02)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()


def test_demo_sweep_runs_offline_and_writes_the_contract_tables(tmp_path, ray_session, monkeypatch, capsys):
    for key in [k for k in os.environ if k.endswith("_API_KEY")]:
        monkeypatch.delenv(key)  # offline: no key (test_install runs the demo as a process of its own)
    assert main(["+grid=demo", f"run.dir={tmp_path}"]) == 0
    out = capsys.readouterr().out
    assert "statuses: AGREEMENT" in out and "tables: games.parquet 60 rows" in out
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
    from ray._private import state

    before = set(state.actors())
    assert main(["+grid=demo", f"run.dir={tmp_path}", "run.report=false"]) == 0
    assert "0 to run" in capsys.readouterr().out and len(read_journal(tmp_path / "journal.jsonl")) == 60
    assert main(["+grid=demo", f"run.dir={tmp_path}", "run.report=false", "run.max_cost_usd=2.5"]) == 0
    out = capsys.readouterr().out
    assert "budget: run.max_cost_usd=$2.5000, $2.5000 left, not reached" in out and "tables: games.parquet 60 rows" in out
    assert not set(state.actors()) - before, "a folder with nothing left to play starts no actor (runner, budget, ...)"


def test_sigkilled_sweep_resumes_without_redoing_finished_games(tmp_path, sweep_env, capsys):
    """While it plays, the sweep reads as running; SIGKILLed, as stopped; resumed, it plays only what was left."""
    folder = tmp_path / "outputs" / "killed"  # alone in its parent: what list_sweeps lists is this sweep
    args = ["+grid=demo", "grid.blocks=10", f"run.dir={folder}", "run.games_per_task=1", "run.max_in_flight=4",
            "run.progress=false", "run.report=false"]

    def running(proc: subprocess.Popen) -> None:
        live = read_progress(folder)
        assert proc.poll() is None and read_status(folder).state == "running"
        assert live.running is not None and live.running.pid == proc.pid and live.running.checked
        assert [s["state"] for s in list_sweeps(folder.parent)] == ["running"]

    kill_after(args, sweep_env, folder / "journal.jsonl", games=40, live=running)
    assert json.loads((folder / "status.json").read_text())["state"] == "running", "a SIGKILL leaves running behind"
    dead = read_progress(folder)
    assert read_status(folder).state == dead.state == "stopped" and dead.running is None
    assert dead.note().startswith("partial: its driver stopped without ending it (killed or crashed); ")
    assert [s["state"] for s in list_sweeps(folder.parent)] == ["stopped"]
    view = Follower(folder).snapshot()
    assert not view.running and view.state == "stopped"

    before = read_journal(folder / "journal.jsonl")
    assert 40 <= len(before) < 200, "the kill must land part-way"
    assert main(args) == 0
    assert f"{len(before)} finished" in capsys.readouterr().out
    records = read_journal(folder / "journal.jsonl")
    finished = Counter(r["unit"]["unit_id"] for r in records if r["outcome"]["known"])
    assert max(finished.values()) == 1, "a finished game ran twice"
    games = pl.read_parquet(folder / "games.parquet")
    assert games.height == 200 and games["unit_id"].n_unique() == 200
    assert set(games["unit_id"]) == set(finished)
    assert {r["unit"]["unit_id"] for r in before} <= set(games["unit_id"])


def test_changed_game_config_is_refused_on_resume(tmp_path, finished_sweep, capsys):
    base = ["+grid=demo", "grid.blocks=1", "run.report=false", "run.progress=false"]
    base.append(f"run.dir={finished_sweep(base, tmp_path / 'sweep')}")
    assert main([*base, "games.tickets.max_turns=10"]) != 0
    err = capsys.readouterr().err
    assert "games.tickets.max_turns 12 → 10" in err and "run.dir=" in err
    assert main([*base, "run.workers=1"]) == 0, "runtime knobs never block a resume"


def test_missing_key_stops_before_any_call(tmp_path, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(SystemExit) as stopped:
        main(["+grid=c3_full", f"run.dir={tmp_path}"])
    assert "ANTHROPIC_API_KEY is not set" in str(stopped.value) and "provider=sim" in str(stopped.value)
    assert not (tmp_path / "journal.jsonl").exists()


def test_bad_config_is_refused_with_a_clear_error(tmp_path, capsys):
    assert main(["+grid=demo", f"run.dir={tmp_path}", "grid.designs.0.pairings=[BX]"]) != 0
    assert "no model for letter 'X'" in capsys.readouterr().err
    assert main([f"run.dir={tmp_path}"]) != 0
    assert "+grid=demo" in capsys.readouterr().err


def test_dry_run_spends_nothing_and_creates_no_folder(tmp_path, capsys):
    """A dry run of c3_full created the real run's folder, listed as "planned, not started" (its manifest)."""
    assert main(["+grid=c3_full", f"run.dir={tmp_path / 'c3'}", "run.dry_run=true"]) == 0
    assert "640 units" in capsys.readouterr().out
    assert not (tmp_path / "c3").exists() and list_sweeps(tmp_path) == []


def test_a_dry_run_binds_nothing_a_later_run_must_match(tmp_path, capsys, ray_session):
    """A dry run with one model, then a real run with another in the same folder, was refused ("holds games of
    another config"), though nothing was played."""
    folder = tmp_path / "s"
    args = ["+grid=demo", "grid.blocks=1", f"run.dir={folder}", "run.progress=false", "run.report=false"]
    assert main([*args, "+models.B.strategy.exponent=9", "run.dry_run=true"]) == 0
    assert main(args) == 0
    assert "another config" not in capsys.readouterr().err
    assert "exponent" not in json.dumps(read_manifest(folder).config.models["B"].strategy)


def test_turn_level_resume_replays_journaled_calls_and_pays_only_for_new_ones(tmp_path, sweep_env, finished_sweep):
    args = ["+grid=demo", "grid.blocks=10", f"run.dir={tmp_path / 'killed'}", "run.games_per_task=1",
            "run.max_in_flight=8", "run.progress=false", "run.journal_calls=true", "run.report=false"]
    kill_after(args, sweep_env, tmp_path / "killed" / "journal.jsonl", games=40)
    finished = {r["unit"]["unit_id"] for r in read_journal(tmp_path / "killed" / "journal.jsonl")}
    paid = read_journal(tmp_path / "killed" / "calls.journal.jsonl")  # the driver was killed: a last line may be cut
    interrupted = {e["call_id"] for e in paid if e["unit_id"] not in finished}
    assert interrupted, "the kill must land while games are part-way"

    assert main(args) == 0
    calls = pl.read_parquet(tmp_path / "killed" / "calls.parquet")
    resumed = set(calls.filter(pl.col("resumed"))["call_id"])
    assert resumed == interrupted, "every journaled call of an interrupted game is replayed, and only those"
    paid_again = [json.loads(line)["call_id"] for line in (tmp_path / "killed" / "calls.journal.jsonl").read_bytes().splitlines()]
    assert len(paid_again) == len(set(paid_again)), "no call was made twice"

    whole = finished_sweep(DEMO_WHOLE, tmp_path / "whole")
    a = read_undated(tmp_path / "killed", "games").select("unit_id", "outcome")
    b = read_undated(whole, "games").select("unit_id", "outcome")
    assert a.height == 200 and a.equals(b), "a resumed sweep ends exactly as an uninterrupted one"


def test_a_strategy_sweep_of_one_batch_starts_one_game_runner_and_no_call_actor(tmp_path, ray_session):
    """A runner no batch would reach is not started, nor an actor for calls no strategy agent makes (limiter,
    budget, call journal, batcher): each is a process and its imports, start-up paid for nothing."""
    from ray._private import state

    pools.close_kept()  # what a new driver process starts
    before = set(state.actors())
    assert main(["+grid=demo", "grid.blocks=1", f"run.dir={tmp_path}", "run.report=false", "run.progress=false"]) == 0
    started = [a["ActorClassName"] for i, a in state.actors().items() if i not in before]
    assert started == ["GameRunner"], "20 units, one batch of 32: one runner, though up to 2 may start"


@pytest.mark.parametrize(("sweep", "runners", "games"), [
    (["+grid=c3_smoke", "provider=sim"], 1, 16),
    (["+grid=demo", "grid.blocks=1", "run.games_per_task=1", "run.workers=2"], 2, 20),
], ids=["workers0-1", "workers1-2"])
def test_a_small_rehearsal_starts_one_game_runner_unless_run_workers_asks_for_more(tmp_path, ray_session, sweep,
                                                                                    runners, games):
    """16 games with models: one runner holds them all in flight, and a second would cost more to start (its
    process and SDK imports) than it plays. ``run.workers`` set is taken as asked (never more than tasks), with
    models or without: it is asked here of 20 strategy games in tasks of one, whose runners start without SDKs."""
    from ray._private import state

    pools.close_kept()  # what a new driver process starts
    before = set(state.actors())
    args = [f"run.dir={tmp_path}", "run.report=false", "run.progress=false"]
    assert main([*sweep, *args]) == 0
    started = [a["ActorClassName"] for i, a in state.actors().items() if i not in before]
    assert started.count("GameRunner") == runners
    assert pl.read_parquet(tmp_path / "games.parquet").height == games


@pytest.mark.parametrize(("workers", "total", "size", "llm", "runners"), [
    (None, 640, 1, True, 2), (None, 100, 100, True, 1), (None, 20, 32, False, 1), (None, 60, 32, False, 1),
    (None, 600, 32, False, 2), (None, 100_000, 32, False, 2), (6, 16, 1, True, 6), (6, 3, 1, True, 3),
    (None, 0, 1, True, 0), (6, 0, 32, False, 0),
])
def test_runner_count_never_starts_a_runner_no_task_would_reach(workers, total, size, llm, runners):
    assert pools.runner_count(workers, total, size, llm) == runners


def test_a_drivers_next_sweep_takes_the_runner_its_last_one_kept_and_one_lost_meanwhile_is_replaced(
        tmp_path, ray_session):
    """A process that runs sweeps one after another (a notebook, this test session) starts its runner once: the
    runner of an ended sweep is kept closed (no connection, no journal), the next sweep binds it and ends as with a
    new one; a kept runner that died meanwhile is replaced, not waited on."""
    import ray
    from ray._private import state

    def runners_started(folder: Path) -> int:
        before = set(state.actors())
        assert main([*args, f"run.dir={folder}"]) == 0
        return [a["ActorClassName"] for i, a in state.actors().items() if i not in before].count("GameRunner")

    pools.close_kept()
    args = ["+grid=c3_smoke", "provider=sim", "games.tickets.max_turns=4", "run.report=false", "run.progress=false"]
    assert runners_started(tmp_path / "first") == 1
    [runner] = pools.kept()
    held = ray.get(runner.__ray_call__.remote(lambda self: (len(self.clients._clients), self.ledger.journal)))
    assert held == (0, None), "a kept runner holds none of its last sweep's clients, nor its journal"

    assert runners_started(tmp_path / "second") == 0, "the next sweep binds the kept runner"
    first, second = (read_undated(tmp_path / name, "games").select("unit_id", "outcome") for name in ("first", "second"))
    assert first.height == 16 and first.equals(second)

    [runner] = pools.kept()
    os.kill(ray.get(runner.__ray_call__.remote(lambda self: os.getpid())), signal.SIGKILL)
    assert runners_started(tmp_path / "third") == 1, "a kept runner lost meanwhile is replaced"
    assert read_undated(tmp_path / "third", "games").select("unit_id", "outcome").equals(first)


def test_a_closed_runner_holds_no_key():
    """What a driver keeps between its sweeps holds none of the last one's keys (``GameRunner.close``)."""
    from bargain_ray.design import load_config
    from bargain_ray.execution.worker import GameRunner

    runner = GameRunner(load_config("c3_smoke").model_dump(mode="json"), keys={"ANTHROPIC_API_KEY": "sk-ant-KEPT"})
    assert runner.clients.keys == {"ANTHROPIC_API_KEY": "sk-ant-KEPT"}
    asyncio.run(runner.close())
    assert not runner.clients.keys and runner.ledger.journal is None
