"""Replay from the sweep folder: ``python -m bargain_ray.replay FOLDER UNIT_ID`` plays a journaled game again from its
own replies, under the game config the manifest fixed, and gives the recorded outcome; ``--export`` writes the
contract's replay file, which replays to the same outcome. Before, the only replay took a hand-made file, and a
dataset's raw file handed to it ended in "invalid JSON: trailing characters"."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from bargain_ray import replay, report

REHEARSALS = {"sim": ["+grid=c3_smoke", "provider=sim", "run.progress=false", "run.report=false"],
              "families": ["+grid=mixed_demo", "run.progress=false", "run.report=false"]}
"""Finished rehearsals: the simulated provider's replies over HTTP, and strategy agents playing every family."""


@pytest.fixture(params=sorted(REHEARSALS))
def rehearsal(request, finished_sweep, tmp_path: Path) -> Path:
    return finished_sweep(REHEARSALS[request.param], tmp_path / "rehearsal")


def test_every_game_of_a_finished_rehearsal_replays_to_its_recorded_outcome(rehearsal: Path, capsys):
    games = pl.read_parquet(rehearsal / "games.parquet")
    assert games.height and set(games["game"]) and games["known"].all()
    for row in games.iter_rows(named=True):
        assert replay.main([str(rehearsal), row["unit_id"]]) == 0, capsys.readouterr().err
        printed = json.loads(capsys.readouterr().out)
        assert (printed["unit_id"], printed["status"]) == (row["unit_id"], row["status"])


def test_an_exported_game_replays_by_the_contract_to_the_same_outcome(rehearsal: Path, tmp_path: Path, capsys):
    games = pl.read_parquet(rehearsal / "games.parquet")
    for row in games.unique("game").iter_rows(named=True):  # one game of each family
        exported = tmp_path / f"{row['unit_id']}.json"
        assert replay.main([str(rehearsal), row["unit_id"], "--export", str(exported)]) == 0
        from_folder = json.loads(capsys.readouterr().out)
        spec = json.loads(exported.read_text())
        assert set(spec) >= {"game", "first_speaker", "replies", "overrides"} and spec["game"] == row["game"]
        assert replay.main([str(exported)]) == 0
        assert json.loads(capsys.readouterr().out) == from_folder


def test_a_dataset_file_or_a_bare_folder_says_what_to_run(rehearsal: Path, capsys):
    report.main([str(rehearsal)])  # the dataset
    capsys.readouterr()
    raw = next((rehearsal / "dataset").rglob("*.jsonl"))
    assert replay.main([str(raw)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"python -m bargain_ray.replay {rehearsal.resolve()} UNIT_ID" in err
    assert replay.main([str(rehearsal)]) == 1
    assert capsys.readouterr().err == f"error: give a unit id after the sweep folder: python -m bargain_ray.replay " \
                                      f"{rehearsal} UNIT_ID\n"
    assert replay.main([str(rehearsal), "no-such-unit"]) == 1
    assert "no game of unit 'no-such-unit'" in capsys.readouterr().err
