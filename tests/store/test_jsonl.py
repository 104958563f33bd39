"""The one JSONL module of both journals: torn tails, corrupt lines, a full disk."""

from __future__ import annotations

import json
import os
import pickle
import shutil
from pathlib import Path

import pytest
from folders import cli, play_demo
from helpers import DATA, game_config, play_replies, small_disk

from bargain_ray.store import CorruptJournal, DiskFull, GameJournal, is_disk_full, read_calls, read_heads, read_records
from bargain_ray.store.calls import CallJournal, SpendEntry
from bargain_ray.store.jsonl import Appender, JournalLine, encode, read_lines


class Line(JournalLine):
    unit_id: str
    text: str = ""


def test_a_torn_tail_is_cut_before_the_next_append(tmp_path):
    replies = json.loads((DATA / "seed001_replay.json").read_text())["replies"]
    game = play_replies(game_config("tickets"), replies, "seller")
    game = game.model_copy(update={"unit": game.unit.model_copy(update={"unit_id": "u3"})})
    spend = SpendEntry(unit_id="u3", call_id="u3-k01", cost_usd=0.5)
    for file, append, line in (
        (tmp_path / "journal.jsonl", lambda: GameJournal(tmp_path).append_many([game]), encode([game])),
        (tmp_path / "calls.journal.jsonl",
         lambda: CallJournal(str(tmp_path / "calls.journal.jsonl")).append(spend), encode([spend])),
    ):
        first = b'{"unit_id": "u1", "call_id": "u1-k01", "cost_usd": 1.0}\n'
        file.write_bytes(first + b'{"unit_id": "u2", "n"')  # a kill mid-write
        assert list(read_lines(file, bytes)) == [first], "a torn tail is not a line yet"
        append()
        assert file.read_bytes() == first + line
    assert line.endswith(b', "version": 2}\n')
    assert read_calls(tmp_path, skip=set()) == {}, "spend entries are paid, never replayed"


def test_one_batch_is_one_write(tmp_path):
    appender = Appender(tmp_path / "j.jsonl")
    appender.append([Line(unit_id="a"), Line(unit_id="b")])
    appender.append([])
    appender.close()
    assert (tmp_path / "j.jsonl").read_bytes() == (b'{"unit_id": "a", "text": "", "version": 2}\n'
                                                   b'{"unit_id": "b", "text": "", "version": 2}\n')


def test_a_corrupt_line_names_its_file_and_line(tmp_path, demo_journal):
    file = tmp_path / "journal.jsonl"
    good = demo_journal.splitlines(keepends=True)[0]
    file.write_bytes(good + b"not json\n" + good)
    with pytest.raises(CorruptJournal, match=rf"^{file}:2: not a JSON line .*delete line 2"):
        list(read_records(tmp_path))
    file.write_bytes(good + b"\xff\xfe\n")  # invalid UTF-8 too
    with pytest.raises(CorruptJournal, match=":2:"):
        list(read_records(tmp_path))
    file.write_bytes(good + b'{"a": 1}\n')  # JSON, but no game record: refused as well, never skipped
    with pytest.raises(CorruptJournal, match=rf"^{file}:2: not a record as this version writes it \(GameRecord.unit: "):
        list(read_records(tmp_path))


def test_a_corrupt_journal_is_refused_by_every_cli_in_one_line(tmp_path):
    play_demo(tmp_path, 3)
    lines = (tmp_path / "journal.jsonl").read_bytes().splitlines(keepends=True)
    (tmp_path / "journal.jsonl").write_bytes(lines[0] + b"{garbage\n" + lines[1])
    for out in (cli("bargain_ray", "+grid=demo", f"run.dir={tmp_path}"), cli("bargain_ray.report", str(tmp_path))):
        assert out.returncode != 0
        assert out.stderr.strip() == out.stderr.strip().splitlines()[0], out.stderr  # one line, no traceback
        assert f"{tmp_path / 'journal.jsonl'}:2: not a JSON line" in out.stderr and "Traceback" not in out.stderr
    assert not (tmp_path / "games.parquet").exists()


@pytest.fixture
def tiny_disk(tmp_path):
    """A real 1 MiB tmpfs (mounting needs root; skipped where it cannot be mounted)."""
    with small_disk(tmp_path, "1m") as mount:
        if mount is None:
            pytest.skip("cannot mount a tmpfs here")
        yield mount


def fill(folder: Path, leave: int) -> Path:
    """A filler file leaving about ``leave`` bytes free."""
    filler = folder / "filler"
    stat = os.statvfs(folder)
    with filler.open("wb") as f:
        f.write(b"\0" * max(0, stat.f_bavail * stat.f_frsize - leave))
    return filler


def test_a_full_disk_survives_pickling_as_itself(tmp_path):
    """It crosses Ray from the call journal's actor to the driver, which must still see a full disk."""
    again = pickle.loads(pickle.dumps(DiskFull(tmp_path)))
    assert isinstance(again, DiskFull) and is_disk_full(again) and str(again) == str(DiskFull(tmp_path))


def test_a_full_disk_keeps_every_complete_line_and_resumes_once_there_is_room(tiny_disk):
    journal = tiny_disk / "sweep"
    journal.mkdir()
    file = journal / "calls.journal.jsonl"
    filler = fill(tiny_disk, 16 * 4096)
    appender = Appender(file)
    entry = Line(unit_id="u", text="x" * 3000)
    written = 0
    with pytest.raises(DiskFull) as full:
        for _ in range(1000):
            appender.append([entry])
            written += 1
    assert 0 < written < 1000
    assert "disk holding" in str(full.value) and str(journal) in str(full.value) and "full" in str(full.value)
    assert file.read_bytes().endswith(b"\n") and len(list(read_lines(file, bytes))) == written, "no torn line is left"
    with pytest.raises(DiskFull):
        appender.append([entry])
    assert len(list(read_lines(file, bytes))) == written
    filler.unlink()
    appender.append([entry])
    appender.close()
    again = Appender(file)  # a new run
    again.append([Line(unit_id="v")])
    again.close()
    lines = list(read_lines(file, Line.model_validate_json))
    assert len(lines) == written + 2 and lines[-1] == Line(unit_id="v", version=2)
    assert all(json.loads(line) for line in file.read_bytes().splitlines())
    shutil.rmtree(journal)


def test_a_line_of_a_newer_format_is_refused_naming_its_version(tmp_path, demo_journal):
    file = tmp_path / "journal.jsonl"
    newer = json.loads(demo_journal.splitlines()[0]) | {"version": 3}
    file.write_bytes(demo_journal.splitlines(keepends=True)[0] + json.dumps(newer).encode() + b"\n")
    for read in (read_records, read_heads):
        with pytest.raises(CorruptJournal, match=rf"^{file}:2: written in journal format 3, and this bargain_ray "
                                                 "reads formats up to 2; nothing was run"):
            list(read(tmp_path))
    old = {k: v for k, v in newer.items() if k != "version"}
    file.write_bytes(json.dumps(old).encode() + b"\n")
    assert [r.unit.unit_id for r in read_records(tmp_path)] == [old["unit"]["unit_id"]], "no version: version 1"


def test_a_restarted_call_journal_writes_an_entry_already_on_disk_once(tmp_path):
    """Ray retries an append that was in flight when the journal's process died; the write may have landed."""
    file = tmp_path / "calls.journal.jsonl"
    first, second = (SpendEntry(unit_id="u", call_id=f"u-k0{i}", cost_usd=0.1) for i in (1, 2))
    journal = CallJournal(str(file))
    journal.append(first)
    journal.close()
    restarted = CallJournal(str(file), indexed=True)
    restarted.append(first)  # the retried append
    restarted.append(second)
    restarted.close()
    assert [e.call_id for e in read_lines(file, SpendEntry.model_validate_json)] == ["u-k01", "u-k02"]
    again = CallJournal(str(file))  # a journal that did not restart indexes nothing: a new call is always written
    again.append(first)
    again.close()
    assert len(list(read_lines(file, bytes))) == 3
