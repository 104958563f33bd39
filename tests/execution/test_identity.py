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
from bargain_ray.store import ChangedConfig, CorruptJournal, GameJournal, open_manifest

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


NOT_RECORDS = ('{"foo": 1}', "[1, 2]", '"hello"')


def valid_line(name: str, unit_id: str, path) -> str:
    """A line of journal ``name`` as this code writes it, for a unit of the design."""
    if name == "journal.jsonl":
        return (path / name).read_text().splitlines()[0]
    if name == "calls.journal.jsonl":
        return json.dumps({"unit_id": unit_id, "call_id": f"{unit_id}-k01", "cost_usd": 0.01, "version": 2})
    return json.dumps({"batch_id": "b1", "api": "anthropic", "route": "r", "calls": {f"{unit_id}-k01": "d"},
                       "created": 1.0})


@pytest.mark.parametrize("line", NOT_RECORDS)
@pytest.mark.parametrize("name", ["journal.jsonl", "calls.journal.jsonl", "batches.journal.jsonl"])
def test_a_journal_line_that_is_json_but_not_a_record_is_refused_before_ray_naming_file_and_line(tmp_path, name, line):
    sweep = play_some(tmp_path, n=1)
    unit_id = next(units(sweep, "20261027")).unit_id
    (tmp_path / name).write_text(valid_line(name, unit_id, tmp_path) + "\n" + line + "\n")
    with pytest.raises(CorruptJournal, match=rf"^{tmp_path / name}:2: not a record as this version writes it \(.*"
                                             r"delete line 2"):
        plan(sweep, tmp_path)


@pytest.mark.parametrize("name", ["journal.jsonl", "calls.journal.jsonl"])
def test_a_record_of_a_unit_the_design_lacks_is_refused_even_unfinished(tmp_path, name):
    sweep = play_some(tmp_path)
    stray = "negotiation-demo-20261027-b09-p01-bb-a1"
    if name == "journal.jsonl":
        lines = rewrite_journal(tmp_path, lambda recs: None)
        unknown = lines[0] | {"unit": lines[0]["unit"] | {"unit_id": stray},
                              "outcome": lines[0]["outcome"] | {"known": False, "status": "TECHNICAL_ERROR"}}
        rewrite_journal(tmp_path, lambda recs: recs.insert(2, unknown))
    else:
        (tmp_path / name).write_text(valid_line(name, next(units(sweep, "20261027")).unit_id, tmp_path) + "\n"
                                     + valid_line(name, stray, tmp_path) + "\n")
    with pytest.raises(ChangedConfig, match=rf"^{tmp_path / name}:[23]: the journal holds a record of unit {stray}, "
                                            "which the current design does not have"):
        plan(sweep, tmp_path)


def test_a_corrupt_call_journal_is_one_line_before_ray_and_leaves_the_status_alone(tmp_path, sweep_env, finished_sweep):
    args = ["+grid=demo", "grid.blocks=1", "run.report=false", "run.progress=false"]
    folder = finished_sweep(args, tmp_path / "sweep")
    status = (folder / "status.json").read_text()
    (folder / "calls.journal.jsonl").write_text('[1, 2]\n')
    ray_tmp = tmp_path / "ray"
    ray_tmp.mkdir()
    env = {k: v for k, v in sweep_env.items() if k != "RAY_ADDRESS"} | {"RAY_TMPDIR": str(ray_tmp)}
    out = subprocess.run([sys.executable, "-m", "bargain_ray", *args, f"run.dir={folder}"], env=env, cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 1 and out.stderr.count("\n") == 1, out.stderr
    assert out.stderr.startswith(f"error: {folder / 'calls.journal.jsonl'}:1: not a record") and "delete line 1" in out.stderr
    assert not list(ray_tmp.iterdir()), "refused before Ray started"
    assert (folder / "status.json").read_text() == status
