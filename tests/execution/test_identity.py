"""Identity on resume: a finished game is skipped only when its unit hash is unchanged; refusals come before Ray."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from itertools import islice

import pytest
from helpers import ROOT

from bargain_ray.design import load_config, units
from bargain_ray.execution.plan import describe, plan
from bargain_ray.execution.sweep import sweep_dir
from bargain_ray.execution.worker import GameRunner
from bargain_ray.store import ChangedConfig, GameJournal, open_manifest

DEMO = ("grid.blocks=1",)


def play_some(path, n=4, created="20261027"):
    """A sweep folder of the demo grid with its first ``n`` games played in-process (strategy agents, no Ray)."""
    sweep = load_config("demo", DEMO)
    open_manifest(path, describe(sweep, created))
    runner = GameRunner(sweep.model_dump(mode="json"))
    journal = GameJournal(path)
    for u in islice(units(sweep, created), n):
        journal.append_many([asyncio.run(runner.play(u))])
    journal.close()
    return sweep


def rewrite_journal(path, edit):
    lines = [json.loads(line) for line in (path / "journal.jsonl").read_text().splitlines()]
    edit(lines)
    (path / "journal.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    return lines


def test_finished_games_with_their_hash_are_skipped_and_keep_the_recorded_date(tmp_path):
    sweep = play_some(tmp_path, created="20200101")
    todo, count, done = plan(sweep, tmp_path)
    assert len(done) == 4 and count == 20 - 4
    rest = list(todo())
    assert len(rest) == count and not done & {u.unit_id for u in rest}
    assert all("-20200101-" in u.unit_id for u in rest)  # a resume on another day renames nothing


def test_a_tampered_unit_hash_is_refused_naming_the_unit(tmp_path):
    sweep = play_some(tmp_path)
    lines = rewrite_journal(tmp_path, lambda recs: recs[2]["unit"].update(hash="0123456789abcdef"))
    with pytest.raises(ChangedConfig) as exc:
        plan(sweep, tmp_path)
    message = str(exc.value)
    assert lines[2]["unit"]["unit_id"] in message and "unit hash 0123456789abcdef" in message and "run.dir=" in message


def test_a_finished_unit_the_design_does_not_have_is_refused(tmp_path):
    sweep = play_some(tmp_path)
    rewrite_journal(tmp_path, lambda recs: recs[0]["unit"].update(unit_id="negotiation-demo-20261027-b09-p01-bb-a1"))
    with pytest.raises(ChangedConfig, match="negotiation-demo-20261027-b09-p01-bb-a1, which the current design"):
        plan(sweep, tmp_path)


def test_a_journal_without_its_manifest_is_refused(tmp_path):
    sweep = play_some(tmp_path)
    (tmp_path / "manifest.json").unlink()
    with pytest.raises(ChangedConfig, match="journal.jsonl but no manifest.json"):
        plan(sweep, tmp_path)
    assert not (tmp_path / "manifest.json").exists()


def test_rehearsals_and_real_runs_of_one_grid_get_their_own_default_folders():
    assert str(sweep_dir(load_config("c3_full"))) == "outputs/c3_full"  # the contract for real providers
    assert str(sweep_dir(load_config("c3_full", ["provider=sim"]))) == "outputs/c3_full-sim"
    assert str(sweep_dir(load_config("c3_full", ["provider=local"]))) == "outputs/c3_full-local"
    assert str(sweep_dir(load_config("c3_full", ["provider=sim", "run.dir=/tmp/x"]))) == "/tmp/x"


def test_a_seed_change_on_a_finished_folder_is_refused_before_ray_starts(tmp_path, sweep_env, finished_sweep):
    """End to end: the folder is a finished one's copy; the CLI run on it has no cluster to join and a Ray temp
    folder of its own, so a Ray started by mistake would leave a session there."""
    args = ["+grid=demo", "grid.blocks=1", "run.report=false", "run.progress=false"]
    folder = finished_sweep(args, tmp_path / "sweep")
    base = [sys.executable, "-m", "bargain_ray", *args, f"run.dir={folder}"]
    ray_tmp = tmp_path / "ray"
    ray_tmp.mkdir()
    env = {k: v for k, v in sweep_env.items() if k != "RAY_ADDRESS"} | {"RAY_TMPDIR": str(ray_tmp)}
    out = subprocess.run([*base, "grid.seed=8"], env=env, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode != 0
    assert "grid.seed 7 → 8" in out.stderr and "run.dir=" in out.stderr and "Traceback" not in out.stderr
    assert "Started a local Ray instance" not in out.stdout + out.stderr and not list(ray_tmp.iterdir())
