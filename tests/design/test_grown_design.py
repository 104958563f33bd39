"""A sweep folder that grows (issue 21.1), without Ray: where each unit of a grown design sits, what the plan keeps
and refuses, and a folder written by the code before growth (commit 1037687) resuming and growing."""

from __future__ import annotations

import asyncio
import gzip
import shutil
from pathlib import Path

import polars as pl
import pytest

from bargain_ray.analysis.view import Follower
from bargain_ray.config.errors import ConfigError
from bargain_ray.design import load_config, units
from bargain_ray.design.units import renamed
from bargain_ray.execution.plan import plan
from bargain_ray.execution.worker import GameRunner
from bargain_ray.store import ChangedConfig, GameJournal, read_manifest, read_tables, write_tables

DATA = Path(__file__).parents[1] / "data"
BEFORE = DATA / "folder_1037687"
"""A demo folder (``grid.blocks=1``, 6 games played in-process) as the code of commit 1037687 wrote it: a manifest
without designs, journal lines without the fields added since."""
PAIRINGS = "grid.designs.0.pairings=[BB,BL,BC,LC,CC,LL]"


def ids_and_hashes(sweep, created="20261201", earlier=()):
    return {u.unit_id: u.hash for u in units(sweep, created, earlier)}


def play(path: Path, sweep, n: int | None = None) -> int:
    """Play the plan's units still to run (the first ``n``) into ``path``, in-process; how many."""
    runner, journal = GameRunner(sweep.model_dump(mode="json")), GameJournal(path)
    todo = list(plan(sweep, path).todo())[:n]
    for u in todo:
        journal.append_many([asyncio.run(runner.play(u))])
    journal.close()
    return len(todo)


def test_more_blocks_lay_out_as_a_fresh_sweep_of_the_larger_design():
    three, six = load_config("demo"), load_config("demo", ["grid.blocks=6"])
    grown = ids_and_hashes(six, earlier=[three.grid])
    assert grown == ids_and_hashes(six) and ids_and_hashes(three).items() <= grown.items()


def test_a_new_pairing_keeps_every_unit_id_and_hash_and_goes_after_them_in_each_block():
    demo, more = load_config("demo"), load_config("demo", [PAIRINGS, "+models.X=${models.L}",
                                                             "grid.designs.0.pairings=[BB,BL,BC,LC,CC,XB]"])
    before, grown = ids_and_hashes(demo), ids_and_hashes(more, earlier=[demo.grid])
    assert before.items() <= grown.items() and len(grown) == 3 * 24
    added = [u for u in grown if u not in before]
    assert all(int(u.split("-p")[1][:2]) > 20 for u in added) and {u.split("-")[5] for u in added} == {"xb"}
    # laid out afresh, the larger design would have moved units already played: the layout is what keeps them
    assert not before.items() <= ids_and_hashes(more).items()


def test_a_first_speaker_that_would_rename_played_cells_is_refused_one_that_does_not_is_growth():
    one = load_config("demo", ["grid.designs.0.first_speakers=[buyer]"])
    both = load_config("demo")
    assert renamed([one.grid], both.grid)[0][:3] == ("grid.designs.0.first_speakers", ["buyer"], ["buyer", "seller"])
    default = load_config("demo", ["grid.designs.0.first_speakers=[null]"])
    also = load_config("demo", ["grid.designs.0.first_speakers=[null,seller]"])
    assert renamed([default.grid], also.grid) == []
    assert ids_and_hashes(default).items() <= ids_and_hashes(also, earlier=[default.grid]).items()
    swapped = load_config("demo", ["grid.designs.0.assignments.0.roles={buyer: B, seller: A}"])
    assert renamed([both.grid], swapped.grid)[0][0] == "grid.designs.0.assignments.0.roles"


def test_a_grid_that_lays_out_one_cell_twice_is_refused():
    with pytest.raises(ConfigError, match="lay out one cell twice"):
        load_config("demo", ["grid.designs.0.pairings=[BB,BB]"])


def test_a_grown_design_keeps_finished_units_and_a_narrower_one_leaves_them_in_the_journal(tmp_path):
    demo = load_config("demo", [f"run.dir={tmp_path}", "grid.blocks=1"])
    assert play(tmp_path, demo) == 20
    grown = load_config("demo", [f"run.dir={tmp_path}", "grid.blocks=2", PAIRINGS])
    planned = plan(grown, tmp_path)
    assert (len(planned.done), planned.count, planned.new, planned.grown, planned.design) == (20, 28, 28, True, 2)
    assert "design 2 of this folder: 20 kept, 28 new" in planned.line("demo")
    assert play(tmp_path, grown, 5) == 5  # part-way: 5 of the new units
    manifest = read_manifest(tmp_path)
    assert [(d.units, d.added, d.dropped) for d in manifest.designs] == [(20, 20, 0), (48, 28, 0)]
    assert manifest.designs[1].changes == ['grid.blocks 1 → 2', 'grid.designs.0.pairings ["BB", "BL", "BC", "LC", '
                                           '"CC"] → ["BB", "BL", "BC", "LC", "CC", "LL"]']
    journal = (tmp_path / "journal.jsonl").read_bytes()
    narrow = load_config("demo", [f"run.dir={tmp_path}", "grid.blocks=1", "grid.designs.0.pairings=[BB,BL]"])
    planned = plan(narrow, tmp_path)
    assert (len(planned.done), planned.count, planned.dropped) == (8, 0, 17)  # 12 of design 1, 5 of design 2
    assert "17 games of earlier designs are not in this one" in planned.line("demo")
    write_tables(tmp_path)
    assert (tmp_path / "journal.jsonl").read_bytes() == journal
    tables = read_tables(tmp_path)
    assert set(tables["games"]["pairing"]) == {"BB", "BL"} and tables["games"].height == 8
    assert set(tables["calls"]["unit_id"]) <= set(tables["games"]["unit_id"])
    assert Follower(tmp_path).snapshot().finished == 8  # the live view counts the design's games, as the tables do
    again = plan(load_config("demo", [f"run.dir={tmp_path}", "grid.blocks=2", PAIRINGS]), tmp_path)
    assert (len(again.done), again.count, again.dropped) == (25, 23, 0)  # grown back: nothing was lost
    assert read_tables(tmp_path)["games"].height == 25


def test_a_grown_design_that_changes_a_model_or_a_game_is_refused_naming_the_field(tmp_path):
    demo = load_config("demo", [f"run.dir={tmp_path}", "grid.blocks=1"])
    play(tmp_path, demo, 3)
    for change, named in [("+models.B.strategy.exponent=9", "models.B.strategy.exponent"),
                          ("games.tickets.max_turns=5", "games.tickets.max_turns 12 → 5"),
                          ("grid.seed=8", "grid.seed 7 → 8")]:
        with pytest.raises(ChangedConfig, match=named):
            plan(load_config("demo", [f"run.dir={tmp_path}", "grid.blocks=2", change]), tmp_path)
    dropped = load_config("demo", [f"run.dir={tmp_path}", "grid.designs.0.pairings=[LC]", "~models.B"])
    plan(dropped, tmp_path)  # a model only the earlier design played may go
    with pytest.raises(ChangedConfig, match="models.B.strategy.exponent"):  # and come back only as it was
        plan(load_config("demo", [f"run.dir={tmp_path}", "+models.B.strategy.exponent=9"]), tmp_path)


def test_a_dry_run_of_a_grown_design_records_nothing(tmp_path):
    demo = load_config("demo", [f"run.dir={tmp_path}", "grid.blocks=1"])
    play(tmp_path, demo, 2)
    manifest = (tmp_path / "manifest.json").read_bytes()
    planned = plan(load_config("demo", [f"run.dir={tmp_path}", "grid.blocks=3", "run.dry_run=true"]), tmp_path)
    assert (planned.grown, planned.new, planned.count) == (True, 40, 58)
    assert (tmp_path / "manifest.json").read_bytes() == manifest


def before_growth(path: Path) -> Path:
    """A copy of the folder commit 1037687 wrote."""
    path.mkdir()
    shutil.copy(BEFORE / "manifest.json", path)
    (path / "journal.jsonl").write_bytes(gzip.decompress((BEFORE / "journal.jsonl.gz").read_bytes()))
    return path


def test_a_folder_written_before_growth_resumes_unchanged_and_grows(tmp_path):
    folder = before_growth(tmp_path / "old")
    manifest = (folder / "manifest.json").read_bytes()
    demo = load_config("demo", [f"run.dir={folder}", "grid.blocks=1"])
    planned = plan(demo, folder)
    assert (len(planned.done), planned.count, planned.grown) == (6, 14, False)
    assert (folder / "manifest.json").read_bytes() == manifest  # resumed as it was: nothing rewritten
    before = read_tables(folder)["games"]
    assert before.height == 6 and before["started_at"].null_count() == 6  # kept since: null in its records
    grown = plan(load_config("demo", [f"run.dir={folder}", "grid.blocks=2", PAIRINGS]), folder)
    assert (len(grown.done), grown.count, grown.new) == (6, 42, 28)
    recorded = read_manifest(folder)
    assert [(d.at, d.units, d.added) for d in recorded.designs][0] == (None, 20, 20)
    assert recorded.created == "20261201" and all("-20261201-b" in u for u in grown.done)
    kept = read_tables(folder)["games"].select("unit_id", "unit_hash", "outcome_json")
    assert kept.equals(before.select("unit_id", "unit_hash", "outcome_json"))
    assert pl.Series(sorted(grown.done)).equals(pl.Series(sorted(before["unit_id"])))
