"""All four families in one sweep: killed, resumed, and tabled per family."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections import Counter

import polars as pl
from helpers import ROOT, complete_lines

from bargain_ray.__main__ import main

FAMILIES = {"multi_issue", "bargaining", "scorable", "freetext"}


def test_mixed_grid_is_killed_resumes_and_tables_every_family(tmp_path, sweep_env, capsys):
    args = ["+grid=mixed_demo", "grid.blocks=4", f"run.dir={tmp_path}", "run.games_per_task=1", "run.max_in_flight=4",
            "run.progress=false"]
    proc = subprocess.Popen([sys.executable, "-m", "bargain_ray", *args, "run.report=false"], env=sweep_env, cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    journal = tmp_path / "journal.jsonl"
    deadline = time.time() + 180
    while time.time() < deadline and complete_lines(journal) < 15:
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    killed_at = complete_lines(journal)
    assert 15 <= killed_at < 40

    assert main(args) == 0  # the resume, in-process on the session's Ray
    assert f"{killed_at} finished" in capsys.readouterr().out

    records = [json.loads(line) for line in journal.read_bytes().splitlines()]
    assert max(Counter(r["unit"]["unit_id"] for r in records).values()) == 1, "no game ran twice"
    games = pl.read_parquet(tmp_path / "games.parquet")
    assert games.height == 40 and games["unit_id"].n_unique() == 40
    assert set(games["family"]) == FAMILIES and games["known"].all()
    turns = pl.read_parquet(tmp_path / "turns.parquet").join(games.select("unit_id", "family"), on="unit_id")
    assert set(turns["family"]) == FAMILIES
    per_game = pl.read_parquet(tmp_path / "dataset" / "metrics" / "metrics_per_game.parquet")
    counts = dict(per_game.group_by("family").len().iter_rows())
    assert counts == dict(games.group_by("family").len().iter_rows())
    # each family's own metrics are there, not only the shared columns
    assert per_game.filter(pl.col("family") == "bargaining")["sigma_b"].is_not_null().any()
    assert per_game.filter(pl.col("family") == "scorable")["feasible_deals"].is_not_null().all()
    assert per_game.filter(pl.col("family") == "freetext")["allocation_type"].is_not_null().all()
    assert per_game.filter(pl.col("family") == "multi_issue")["efficiency_all_assigned"].is_not_null().all()
