"""Tables as a set: a kill between the files leaves a reader the old set or the new one, and the
report says when the sweep behind them is running or unfinished."""

from __future__ import annotations

import subprocess
import sys

import polars as pl
import pytest
from folders import cli
from helpers import ROOT
from test_lock import HOLD

from bargain_ray.store import read_tables, write_status, write_tables
from bargain_ray.store.tables import GENERATION_KEY, published

KILL_AFTER = """
import os, signal, sys
from pathlib import Path
from bargain_ray.store import write_tables
replace, moved = os.replace, []
def dying_replace(src, dst):
    replace(src, dst)
    moved.append(dst)
    if len(moved) == int(sys.argv[2]):
        os.kill(os.getpid(), signal.SIGKILL)
os.replace = dying_replace
write_tables(Path(sys.argv[1]))
"""


def generation(file) -> str:
    return pl.read_parquet_metadata(file)[GENERATION_KEY]


def consistent(tables: dict[str, pl.DataFrame]) -> None:
    units = set(tables["games"]["unit_id"])
    assert set(tables["turns"]["unit_id"]) == units
    assert tables["turns"].height == tables["games"]["calls_attempted"].sum()


@pytest.mark.parametrize("kill_after", [1, 3])
def test_a_kill_while_tables_are_written_leaves_a_reader_one_set(tmp_path, demo_journal, demo_manifest, kill_after):
    lines = demo_journal.splitlines(keepends=True)
    (tmp_path / "manifest.json").write_text(demo_manifest)
    (tmp_path / "journal.jsonl").write_bytes(b"".join(lines[:6]))
    write_tables(tmp_path)
    old = generation(tmp_path / "turns.parquet")
    assert published(tmp_path) and read_tables(tmp_path)["games"].height == 6

    with (tmp_path / "journal.jsonl").open("ab") as f:
        f.write(b"".join(lines[6:10]))
    assert not published(tmp_path), "the old set no longer matches the journal"
    write_status(tmp_path, "interrupted", 12)
    killed = subprocess.run([sys.executable, "-c", KILL_AFTER, str(tmp_path), str(kill_after)], cwd=ROOT)
    assert killed.returncode == -9
    gens = {name: generation(tmp_path / f"{name}.parquet") for name in ("games", "turns", "calls")}
    assert gens["games"] != old and (gens["turns"] == old) == (kill_after == 1), "the kill landed between files"
    assert pl.read_parquet(tmp_path / "games.parquet").height == 10

    tables = read_tables(tmp_path)
    assert not published(tmp_path)
    consistent(tables)
    assert tables["games"].height == 10

    out = cli("bargain_ray.report", str(tmp_path))
    assert out.returncode == 0, out.stderr
    first = out.stdout.splitlines()[0]
    assert first == "partial: the sweep is unfinished; 10 of 12 units finished, 2 still to play (0 unknown); run it again to finish it"
    html = (tmp_path / "report.html").read_text()
    assert first in html and html.count('<details class="game" ') == 10

    assert write_tables(tmp_path)["games"] == 10 and published(tmp_path)
    again = read_tables(tmp_path)
    for name in ("games", "turns", "calls"):
        assert again[name].sort(again[name].columns[:2]).equals(tables[name].sort(tables[name].columns[:2])), name
    assert not list(tmp_path.glob(".tables-*"))


def test_report_on_a_running_sweep_says_so_first(tmp_path, demo_journal, demo_manifest):
    (tmp_path / "manifest.json").write_text(demo_manifest)
    (tmp_path / "journal.jsonl").write_bytes(demo_journal)
    write_status(tmp_path, "running", 60)
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(tmp_path)], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        out = cli("bargain_ray.report", str(tmp_path))
    finally:
        holder.kill()
        holder.wait()
    assert out.returncode == 0, out.stderr
    first = out.stdout.splitlines()[0]
    assert first.startswith("partial: a sweep is running in this folder (host ") and f"pid {holder.pid}" in first
    assert "12 of 60 units finished, 48 still to play" in first
    assert first in (tmp_path / "report.html").read_text()
    assert not (tmp_path / "games.parquet").exists(), "a reader never writes the tables"


def test_a_complete_sweep_has_no_banner(tmp_path, demo_journal, demo_manifest):
    (tmp_path / "manifest.json").write_text(demo_manifest)
    (tmp_path / "journal.jsonl").write_bytes(demo_journal)
    write_status(tmp_path, "ended", 12)
    write_tables(tmp_path)
    out = cli("bargain_ray.report", str(tmp_path))
    assert out.returncode == 0 and out.stdout.startswith("report: ")
    assert "partial:" not in (tmp_path / "report.html").read_text()


def test_tables_an_older_bargain_ray_published_are_rebuilt_not_read_short(tmp_path, demo_journal, demo_manifest):
    """A set published before a column existed (here calls' ``drift``, issue 21.2) is stale: the report reads the
    journal's rows with every column, and the next write publishes them."""
    (tmp_path / "manifest.json").write_text(demo_manifest)
    (tmp_path / "journal.jsonl").write_bytes(demo_journal)
    write_status(tmp_path, "ended", 12)
    write_tables(tmp_path)
    calls = tmp_path / "calls.parquet"
    old = pl.read_parquet(calls).drop("drift", "sent_at", "answered_at", "system_fingerprint")
    old.write_parquet(calls, metadata={GENERATION_KEY: generation(calls)})
    assert not published(tmp_path) and "drift" in read_tables(tmp_path)["calls"].columns
    out = cli("bargain_ray.report", str(tmp_path))
    assert out.returncode == 0, out.stderr
    write_tables(tmp_path)
    assert published(tmp_path) and "drift" in pl.read_parquet_schema(calls)


def test_a_table_corrupted_behind_an_intact_footer_is_rebuilt_from_the_journal(tmp_path, demo_journal, demo_manifest):
    """A parquet whose data pages changed under an intact footer was taken as published, and the report ended in a
    polars traceback: the set's digests find it, and its rows come from the journal."""
    (tmp_path / "manifest.json").write_text(demo_manifest)
    (tmp_path / "journal.jsonl").write_bytes(demo_journal)
    write_status(tmp_path, "ended", 12)
    write_tables(tmp_path)
    expected = read_tables(tmp_path)
    turns = tmp_path / "turns.parquet"
    data = bytearray(turns.read_bytes())
    data[100:600] = bytes(b ^ 0x5A for b in data[100:600])
    turns.write_bytes(bytes(data))
    assert generation(turns) == generation(tmp_path / "games.parquet"), "the footer still names the set"
    with pytest.raises(pl.exceptions.PolarsError):
        pl.read_parquet(turns)
    assert not published(tmp_path)
    rebuilt = read_tables(tmp_path)
    for name in ("games", "turns", "calls"):
        key = rebuilt[name].columns[:2]
        assert rebuilt[name].sort(key).equals(expected[name].sort(key)), name
    out = cli("bargain_ray.report", str(tmp_path))
    assert (out.returncode, out.stderr) == (0, "") and out.stdout.startswith("report: ")
    write_tables(tmp_path)
    assert published(tmp_path), "the next write publishes the set again"


def test_report_on_a_folder_whose_status_is_cut_short_is_one_line(tmp_path, demo_journal, demo_manifest):
    """A status.json cut short ended the report in pydantic's three-line validation error."""
    (tmp_path / "manifest.json").write_text(demo_manifest)
    (tmp_path / "journal.jsonl").write_bytes(demo_journal)
    (tmp_path / "status.json").write_text('{"state": "ended", "units": ')
    out = cli("bargain_ray.report", str(tmp_path))
    assert (out.returncode, out.stdout) == (1, "")
    assert out.stderr == (f"error: {tmp_path / 'status.json'} is not a status this version writes (cut short or "
                          "edited); delete it: the folder's next run writes it again, and its games are in the journal\n")
