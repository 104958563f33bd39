"""Durability through the CLI on real Ray: one driver per folder, and a disk that fills mid-sweep."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import polars as pl
import pytest
import ray
from helpers import DEMO_WHOLE, ROOT, complete_lines, read_undated, resize_disk, small_disk, undated

from bargain_ray.__main__ import main
from bargain_ray.core.status import ExitCode
from bargain_ray.execution.journal_actor import start_journal
from bargain_ray.providers.sim import SimServer, SimSettings
from bargain_ray.store import DiskFull, SpendEntry, is_disk_full, lock_holder
from bargain_ray.store.jsonl import JOURNAL_VERSION

SWEEP = [sys.executable, "-m", "bargain_ray", "+grid=demo", "run.progress=false", "run.report=false"]


def run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([*SWEEP, *args], env=env, cwd=ROOT, capture_output=True, text=True, timeout=400)


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_bytes().splitlines()] if path.exists() else []


def test_a_second_driver_is_refused_at_once_and_the_first_finishes(tmp_path, sweep_env):
    args = [f"run.dir={tmp_path}", "run.games_per_task=1", "run.max_in_flight=4"]  # the demo's 60 units
    first = subprocess.Popen([*SWEEP, *args], env=sweep_env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
    deadline = time.time() + 120
    while time.time() < deadline and first.poll() is None and not (tmp_path / "journal.jsonl").exists():
        time.sleep(0.005)
    first.send_signal(signal.SIGSTOP)  # mid-sweep: it holds the folder, paused, for as long as the second takes
    try:
        holder = lock_holder(tmp_path)
        assert holder is not None and holder.pid == first.pid, "the first driver holds the folder while it plays"
        assert complete_lines(tmp_path / "journal.jsonl") < 60, "paused part-way"  # mid-write: a line may be cut
        second = run(args, sweep_env)
        assert first.poll() is None, "the second driver must start while the first still plays"
    finally:
        first.send_signal(signal.SIGCONT)
    assert second.returncode != 0
    message = second.stderr.strip()
    assert len(message.splitlines()) == 1, second.stderr
    assert f"is in use by another driver (host {holder.host}, pid {first.pid}, since {holder.since})" in message
    assert "delete" in message and "driver.lock" in message
    assert "units" not in second.stdout, "refused before the plan"

    out, err = first.communicate(timeout=400)
    assert first.returncode == 0, err
    played = Counter(r["unit"]["unit_id"] for r in lines(tmp_path / "journal.jsonl"))
    assert len(played) == 60 and set(played.values()) == {1}, "every unit played once"
    assert pl.read_parquet(tmp_path / "games.parquet")["unit_id"].n_unique() == 60
    assert lock_holder(tmp_path) is None


def test_a_disk_that_fills_mid_sweep_ends_cleanly_and_resumes_to_the_same_tables(tmp_path, sweep_env, finished_sweep,
                                                                                  capsys):
    args = ["grid.blocks=10", "run.journal_calls=true", "run.games_per_task=4"]
    with small_disk(tmp_path, "1500k") as disk:
        if disk is None:
            pytest.skip("cannot mount a tmpfs here")
        whole = finished_sweep(DEMO_WHOLE, tmp_path / "whole")  # the same sweep, uninterrupted
        folder = disk / "sweep"
        full = run([*args, f"run.dir={folder}"], sweep_env)
        assert full.returncode == ExitCode.DISK_FULL, full.stderr
        assert full.stderr.strip() == (f"error: the disk holding {folder} is full; the run stopped and every result "
                                       "already journaled is kept. Free some space, then run the same command "
                                       "again to resume.")
        assert not (folder / "games.parquet").exists(), "no tables attempted"
        games, calls = (folder / "journal.jsonl").read_bytes(), (folder / "calls.journal.jsonl").read_bytes()
        finished = {r["unit"]["unit_id"] for r in lines(folder / "journal.jsonl")}
        journaled = {e["call_id"] for e in lines(folder / "calls.journal.jsonl")}  # every line parses
        assert 0 < len(finished) < 200 and journaled

        resize_disk(disk, "32m")
        capsys.readouterr()
        assert main([*SWEEP[3:], *args, f"run.dir={folder}"]) == 0
        assert f"{len(finished)} finished" in capsys.readouterr().out
        assert (folder / "journal.jsonl").read_bytes().startswith(games)
        assert (folder / "calls.journal.jsonl").read_bytes().startswith(calls), "every journaled call kept"
        tables = {name: pl.read_parquet(folder / f"{name}.parquet") for name in ("games", "turns", "calls")}
    replayed = set(tables["calls"].filter(pl.col("resumed"))["call_id"])
    open_calls = {c for c in journaled if c.rsplit("-k", 1)[0] not in finished}
    assert replayed == open_calls, "calls journaled for unfinished games are replayed, never paid again"

    a, b = undated(tables["games"]), read_undated(whole, "games")
    assert a.height == 200 and a.select("unit_id", "status", "outcome").equals(b.select("unit_id", "status", "outcome"))
    assert undated(tables["turns"]).drop("call_ids").equals(read_undated(whole, "turns").drop("call_ids"))


@ray.remote(num_cpus=0)
def _append_from_a_worker(journal, entry: SpendEntry) -> None:
    ray.get(journal.append.remote(entry))


def test_a_full_disk_in_the_call_journal_actor_reaches_the_driver_as_disk_full(tmp_path, ray_session):
    """The call journal is written by an actor, two Ray hops from the driver: ENOSPC must still arrive
    as a full disk (a clean stop), not as an unserializable error (a traceback)."""
    with small_disk(tmp_path, "64k") as disk:
        if disk is None:
            pytest.skip("cannot mount a tmpfs here")
        journal = start_journal(disk)
        try:
            with pytest.raises(Exception) as raised:
                for _ in range(100):
                    ray.get(_append_from_a_worker.remote(journal, SpendEntry(unit_id="u", call_id="x" * 8000, cost_usd=0.1)))
            assert is_disk_full(raised.value), repr(raised.value)
            assert f"the disk holding {disk} is full" in str(DiskFull(disk))
        finally:
            ray.get(journal.close.remote())
            ray.kill(journal)
        assert (disk / "calls.journal.jsonl").read_bytes().endswith(b"\n")


def as_version_1(path: Path) -> int:
    """Rewrite a journal as the code before journal versions wrote it (no ``version`` key; a game's unit names its
    role -> letter map ``model_of_role``, as formats 1 and 2 did); its line count."""
    entries = lines(path)
    assert entries and all(e.pop("version") == JOURNAL_VERSION for e in entries), "every line this code writes carries its version"
    for e in entries:
        if "unit" in e:
            e["unit"]["model_of_role"] = e["unit"].pop("letter_of_role")
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    return len(entries)


def test_a_folder_of_journal_version_1_resumes_and_replays(tmp_path, ray_session, capsys):
    """Today's folders (lines without ``version``) still resume: their finished games are skipped, the replies of
    unfinished ones replay free, and the lines the resume adds carry the current version."""

    folder = tmp_path / "sweep"
    args = ["+grid=c3_smoke", "provider=sim", "games.tickets.max_turns=4", "run.progress=false", "run.report=false",
            f"run.dir={folder}"]
    with SimServer(SimSettings()) as url:
        assert main([*args, f"provider.settings.base_url={url}"]) == 0
        calls = as_version_1(folder / "calls.journal.jsonl")
        games = lines(folder / "journal.jsonl")[:10]  # 6 games unfinished: their calls are journaled, not played
        (folder / "journal.jsonl").write_text("".join(json.dumps(g) + "\n" for g in games))
        as_version_1(folder / "journal.jsonl")
        capsys.readouterr()
        assert main([*args, f"provider.settings.base_url={url}"]) == 0
    out = capsys.readouterr().out
    assert "16 units, 10 finished, 6 to run" in out and "paid now: 0 calls" in out
    assert pl.read_parquet(folder / "calls.parquet")["resumed"].sum() > 0
    assert len(lines(folder / "calls.journal.jsonl")) == calls, "nothing paid: every call replayed"
    journal = lines(folder / "journal.jsonl")
    assert [e.get("version") for e in journal] == [None] * 10 + [JOURNAL_VERSION] * 6
