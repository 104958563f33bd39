"""No reply can poison a folder: a journaled reply the parser once crashed on replays on resume as a format failure
with its repair, and the sweep ends (exit 0) with the game played on from the repair."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from bargain_ray.__main__ import main
from bargain_ray.providers.sim import SimServer, SimSettings
from bargain_ray.store import CALLS_JOURNAL, JOURNAL

BRACKETS = "[" * 2000 + "]" * 2000
"""A small model looping on "[": the reply that raised RecursionError in the parser, in the worker, on every resume."""


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_bytes().splitlines()]


def write(path: Path, entries: list[dict]) -> None:
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))


def test_a_folder_holding_a_reply_that_crashed_the_parser_resumes(tmp_path, ray_session, capsys):
    folder = tmp_path / "sweep"
    args = ["+grid=c3_smoke", "provider=sim", "games.tickets.max_turns=4", "run.progress=false", "run.report=false",
            f"run.dir={folder}"]
    with SimServer(SimSettings()) as url:
        assert main([*args, f"provider.settings.base_url={url}"]) == 0
        games = lines(folder / JOURNAL)
        victim = games[0]["unit"]["unit_id"]
        first = f"{victim}-k01"
        # the folder as the crashed run left it: the victim's first reply journaled (paid), its game not
        calls = [c for c in lines(folder / CALLS_JOURNAL) if c["unit_id"] != victim or c["call_id"] == first]
        next(c for c in calls if c["call_id"] == first)["reply"]["text"] = BRACKETS
        write(folder / CALLS_JOURNAL, calls)
        write(folder / JOURNAL, games[1:])
        capsys.readouterr()
        sent = len(lines(folder / CALLS_JOURNAL))
        assert main([*args, f"provider.settings.base_url={url}"]) == 0
    assert "16 units, 15 finished, 1 to run" in capsys.readouterr().out
    record = lines(folder / JOURNAL)[-1]
    assert record["unit"]["unit_id"] == victim and record["outcome"]["known"]
    assert [(a["call_id"], a["rule"]) for a in record["outcome"]["invalid_attempts"]] == [(first, "not_one_json_object")]
    journal = lines(folder / CALLS_JOURNAL)
    assert [c["call_id"] for c in journal].count(first) == 1, "the planted reply was replayed, not paid again"
    assert len(journal) - sent == record["outcome"]["calls_attempted"] - 1, "every call after it paid once"
    calls = pl.read_parquet(folder / "calls.parquet").filter(pl.col("call_id") == first).row(0, named=True)
    assert (calls["resumed"], calls["valid"], calls["response_text"]) == (True, False, BRACKETS)
    assert json.loads((folder / "status.json").read_text())["state"] == "ended"
