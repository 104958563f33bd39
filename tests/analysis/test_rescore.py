"""``python -m bargain_ray.rescore``: every figure recomputed from the journal with this code, a new table
generation, the code recorded in the manifest, the journals untouched, a running driver's folder refused."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from bargain_ray.analysis.rescore import Figures, read_figures, rescore_folder
from bargain_ray.core.provenance import CodeVersion, read_code_version
from bargain_ray.games.bargaining import metrics as bargaining
from bargain_ray.store import JOURNAL, TABLES, hold_lock, read_manifest, read_tables, write_tables
from bargain_ray.store.paths import CALLS_JOURNAL
from bargain_ray.store.tables import published_generation

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
MIXED = ["+grid=mixed_demo", "run.progress=false", "run.report=false"]


def journals(path: Path) -> dict[str, str]:
    return {name: hashlib.sha256((path / name).read_bytes()).hexdigest()
            for name in (JOURNAL, CALLS_JOURNAL) if (path / name).exists()}


@pytest.fixture
def folder(finished_sweep, tmp_path) -> Path:
    return finished_sweep(MIXED, tmp_path / "sweep")


def test_rescoring_with_this_code_keeps_every_figure_and_the_journals(folder):
    before, kept = read_tables(folder), journals(folder)
    done = rescore_folder(folder)
    assert journals(folder) == kept
    after = read_tables(folder)
    for name in TABLES:
        assert after[name].equals(before[name]), name
    assert done.games == before["games"]["known"].sum() and done.kept == 0
    manifest = read_manifest(folder)
    assert manifest.refigured.generation == done.generation == published_generation(folder)
    assert manifest.refigured.code == read_code_version()
    assert read_figures(folder).refigured and read_figures(folder).code == manifest.refigured.code


def test_a_metric_added_later_is_found_on_every_earlier_game_and_twice_gives_the_same_tables(folder, monkeypatch):
    original_game, original_turn = bargaining.per_game, bargaining.per_turn
    monkeypatch.setattr(bargaining, "per_game",
                        lambda c, r, turns=None: original_game(c, r, turns) | {"added_figure": r.unit.seed * 2})
    monkeypatch.setattr(bargaining, "per_turn", lambda c, r: [
        row | {"added_turn_figure": len(str(row["message_chars"]))} for row in original_turn(c, r)])
    assert "added_figure" not in read_tables(folder)["games"].columns
    kept = journals(folder)
    rescore_folder(folder)
    first = read_tables(folder)
    games = first["games"].filter(pl.col("family") == "bargaining")
    assert games.height and (games["added_figure"] == games["seed"] * 2).all()
    assert first["games"].filter(pl.col("family") != "bargaining")["added_figure"].null_count() == (
        first["games"].height - games.height)
    turns = first["turns"].join(games.select("unit_id"), on="unit_id").filter(pl.col("turn_scored"))
    assert turns.height and turns["added_turn_figure"].null_count() == 0
    generation = published_generation(folder)
    rescore_folder(folder)
    second = read_tables(folder)
    assert published_generation(folder) != generation
    for name in TABLES:
        assert second[name].equals(first[name]), name
    assert journals(folder) == kept


def test_tables_written_from_the_journal_again_are_the_journals_figures(folder):
    rescore_folder(folder)
    write_tables(folder)  # what a resumed sweep's driver does at its end
    assert not read_figures(folder).refigured and read_figures(folder).code is None


def test_the_command_refuses_a_folder_a_driver_holds_and_a_folder_that_is_no_sweep(folder, tmp_path):
    command = [sys.executable, "-m", "bargain_ray.rescore"]
    with hold_lock(folder):
        held = subprocess.run([*command, str(folder)], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert held.returncode == 1 and "is in use by another driver" in held.stderr and not held.stdout
    assert held.stderr.count("\n") == 1 and "Traceback" not in held.stderr
    none = subprocess.run([*command, str(tmp_path / "nothing")], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert none.returncode == 1 and "is not a sweep folder: no manifest.json" in none.stderr
    assert not (tmp_path / "nothing").exists()
    done = subprocess.run([*command, str(folder)], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "journals untouched" in done.stdout and f"next: python -m bargain_ray.report {folder}" in done.stdout


def test_figures_by_other_code_are_data_the_report_can_read():
    same = CodeVersion(commit="abc", dirty=False)
    assert not Figures(refigured=False, code=None, sweep_commit="abc").by_other_code
    assert not Figures(refigured=True, code=same, sweep_commit="abc").by_other_code
    assert Figures(refigured=True, code=same, sweep_commit="def").by_other_code
    assert Figures(refigured=True, code=same.model_copy(update={"dirty": True}), sweep_commit="abc").by_other_code
    assert Figures(refigured=True, code=None, sweep_commit="abc").by_other_code


def test_the_rescore_command_module_and_the_public_replay_function_coexist():
    """``python -m bargain_ray.rescore`` made ``bargain_ray.rescore`` a module, which shadowed the public function of
    the same name once imported; the function is ``bargain_ray.replay_transcript``, whatever was imported first."""
    script = (
        "import bargain_ray.rescore, bargain_ray, pathlib, json\n"
        "assert callable(bargain_ray.rescore.main) and 'replay_transcript' in bargain_ray.__all__\n"
        "assert 'rescore' not in bargain_ray.__all__\n"
        f"spec = bargain_ray.ReplayFile.model_validate_json(pathlib.Path({str(DATA / 'seed001_replay.json')!r}).read_text())\n"
        "record = bargain_ray.replay_transcript(spec)\n"
        "print(json.dumps([record.outcome.status.value, bargain_ray.rescore.__name__]))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == ["AGREEMENT", "bargain_ray.rescore"]
