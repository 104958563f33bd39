"""A sweep folder that grows (issue 21.1), end to end on Ray: a finished unit the new design also gives is kept and
never paid again, new units run, a narrower design leaves the journal intact and the tables its own."""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl
import pytest

from bargain_ray.__main__ import main
from bargain_ray.analysis.report import build_report
from bargain_ray.providers.sim import LogEntry, SimServer, SimSettings
from bargain_ray.store import read_manifest

QUIET = ["run.progress=false", "run.report=false"]
PLAYED = "grid.blocks=4"
"""The C3 design grown to 4 blocks, not 40, when it is played: what a grown design keeps and pays is per unit, the
same for 48 new units as for 624 (the dry run still plans the whole 40)."""


def sim_run(grid: str, folder: Path, *more: str) -> tuple[int, list[LogEntry]]:
    """``python -m bargain_ray +grid=<grid> provider=sim`` into ``folder`` against a sim of its own: (exit code,
    every request the sim served)."""
    server = SimServer(SimSettings())
    with server as url:
        code = main([f"+grid={grid}", "provider=sim", f"provider.settings.base_url={url}", f"run.dir={folder}",
                     *QUIET, *more])
    return code, server.log


def paid_lines(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "calls.journal.jsonl").read_text().splitlines()]


def test_c3_smoke_then_c3_full_plans_the_624_new_units_and_pays_only_new_ones(ray_session, tmp_path, capsys):
    folder = tmp_path / "c3"
    code, smoke_requests = sim_run("c3_smoke", folder)
    assert code == 0
    smoke = pl.read_parquet(folder / "games.parquet").select("unit_id", "unit_hash", "outcome_json")
    before = paid_lines(folder)
    assert smoke.height == 16 and len(before) == len(smoke_requests)
    capsys.readouterr()

    # a changed model param on a grown design is refused before Ray, and the refused run records no design
    assert main(["+grid=c3_full", "provider=sim", f"run.dir={folder}", *QUIET,
                 "models.O.params.output_config.effort=high"]) == 1
    err = capsys.readouterr().err
    assert "models.O.params.output_config.effort low → high" in err and "run.dir=" in err
    assert len(read_manifest(folder).designs) == 1

    assert main(["+grid=c3_full", "provider=sim", f"run.dir={folder}", "run.dry_run=true"]) == 0
    dry = capsys.readouterr().out
    assert "design 2 of this folder: 16 kept, 624 new, 0 unfinished of earlier designs" in dry
    assert "624 units to play" in dry and len(read_manifest(folder).designs) == 1  # a dry run records nothing
    # the new part only, estimated from what the 16 finished games measured: each of the 39 new blocks plays the
    # smoke's 16 cells, so it costs what the smoke cost (the fresh folder's estimate is the offline game's instead)
    assert "measured: calls a game and tokens a call of each game, model and role from the 16 finished games" in dry
    spent = pl.read_parquet(folder / "games.parquet")["cost_usd"].sum()
    estimate, bound = (float(x) for x in re.search(r"estimated total: ~\$([\d.]+); upper bound \$([\d.]+)", dry).groups())
    assert estimate == pytest.approx(39 * spent, rel=0.01) and bound > 10 * estimate
    fresh = tmp_path / "fresh"
    assert main(["+grid=c3_full", "provider=sim", f"run.dir={fresh}", "run.dry_run=true"]) == 0
    offline = capsys.readouterr().out
    assert "measured:" not in offline and "624 units" not in offline and "640 units to play" in offline

    code, full_requests = sim_run("c3_full", folder, PLAYED)
    assert code == 0
    after = paid_lines(folder)
    assert after[: len(before)] == before  # the journal of the first design is untouched
    new = after[len(before):]
    assert len(new) == len(full_requests) > 0  # every request the second run sent is one paid line
    assert {e["unit_id"] for e in new}.isdisjoint(smoke["unit_id"])  # none for a unit already played
    games = pl.read_parquet(folder / "games.parquet")
    assert games.height == 64 and games["unit_id"].n_unique() == 64 and games["known"].all()
    assert len({e["unit_id"] for e in new}) == 48
    kept = games.join(smoke, on="unit_id", how="semi").select(smoke.columns).sort("unit_id")
    assert kept.equals(smoke.sort("unit_id"))  # the smoke's games, as they were played
    designs = read_manifest(folder).designs
    assert [(d.grid, d.units, d.added) for d in designs] == [("c3_smoke", 16, 16), ("c3_full", 64, 48)]
    assert "grid.blocks 1 → 4" in designs[1].changes


def demo(folder: Path, *more: str) -> int:
    return main(["+grid=demo", f"run.dir={folder}", *QUIET, *more])


DEMO = ["+grid=demo", *QUIET]
"""The 3-block demo the grown and narrowed folders start from (played once per session by ``finished_sweep``)."""
DEMO_1 = ["+grid=demo", "grid.blocks=1", "run.report=false", "run.progress=false"]
"""The 1-block demo, finished once for this file and test_sweep's and test_identity's."""


def test_demo_with_3_then_6_blocks_plays_the_new_blocks_and_equals_a_fresh_6_block_sweep(finished_sweep, tmp_path,
                                                                                         capsys):
    grown, fresh = finished_sweep(DEMO, tmp_path / "grown"), tmp_path / "fresh"
    first = pl.read_parquet(grown / "games.parquet")
    capsys.readouterr()
    assert demo(grown, "grid.blocks=6") == 0
    out = capsys.readouterr().out
    assert "grid demo: 120 units, 60 finished, 60 to run; design 2 of this folder: 60 kept, 60 new" in out
    assert "games played now: 60  (finished before: 60)" in out
    assert demo(fresh, "grid.blocks=6") == 0
    key = ["unit_id", "unit_hash", "outcome_json"]
    games = pl.read_parquet(grown / "games.parquet").select(key).sort("unit_id")
    assert games.equals(pl.read_parquet(fresh / "games.parquet").select(key).sort("unit_id"))
    assert first.select(key).sort("unit_id").equals(games.join(first, on="unit_id", how="semi").select(key))


def test_adding_a_model_pairing_plays_only_its_cells(finished_sweep, tmp_path, capsys):
    folder = finished_sweep(DEMO_1, tmp_path / "pairing")
    journal = (folder / "journal.jsonl").read_bytes()
    capsys.readouterr()
    assert demo(folder, "grid.blocks=1", "+models.X=${models.L}", "grid.designs.0.pairings=[BB,BL,BC,LC,CC,XB]") == 0
    out = capsys.readouterr().out
    assert "games played now: 4  (finished before: 20)" in out  # XB: 2 assignments x 2 first speakers
    assert (folder / "journal.jsonl").read_bytes().startswith(journal)
    games = pl.read_parquet(folder / "games.parquet")
    assert games.height == 24 and set(games.filter(pl.col("pairing") == "XB")["position"]) == {21, 22, 23, 24}


def test_a_narrowed_grid_keeps_the_journal_and_tables_only_its_units(finished_sweep, tmp_path, capsys):
    folder = finished_sweep(DEMO, tmp_path / "narrow")
    journal = (folder / "journal.jsonl").read_bytes()
    capsys.readouterr()
    assert demo(folder, "grid.blocks=1", "grid.designs.0.pairings=[BB,BL]") == 0
    out = capsys.readouterr().out
    assert "games played now: 0  (finished before: 8)" in out
    assert "52 games of earlier designs of this folder are not in this design: kept in the journal" in out
    assert (folder / "journal.jsonl").read_bytes() == journal
    games = pl.read_parquet(folder / "games.parquet")
    assert games.height == 8 and set(games["pairing"]) == {"BB", "BL"} and set(games["block"]) == {1}
    report = build_report(folder).read_text()  # the report and the card say the folder had two designs
    card = (folder / "dataset" / "README.md").read_text()
    for shown in (report, card):
        assert "This folder was run with 2 designs" in shown and "grid.blocks 3 → 1" in shown
    assert len(list((folder / "dataset" / "raw").glob("*.jsonl"))) == 8  # the dataset is the design's too
    assert demo(folder) == 0  # grown back to the first design: all 60 again, nothing played
    assert pl.read_parquet(folder / "games.parquet").height == 60 and (folder / "journal.jsonl").read_bytes() == journal

