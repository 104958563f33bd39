"""``journal.jsonl``: one line per finished game, appended durably by the driver."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bargain_ray.store.paths import JOURNAL


def read_records(path: Path) -> Iterator[dict[str, Any]]:
    """Every journaled game of the sweep folder ``path``, oldest first; a torn last line is skipped."""
    journal = path / JOURNAL
    if not journal.exists():
        return
    with journal.open("rb") as f:
        for line in f:
            if not line.endswith(b"\n"):
                break
            yield json.loads(line)


_UNIT_ID = re.compile(rb'^\{"unit": \{"unit_id": ("(?:[^"\\\\]|\\\\.)*")')
"""The unit id at the head of a journal line as ``GameJournal`` writes it (read without parsing the line)."""


def _unit_id(line: bytes) -> str:
    m = _UNIT_ID.match(line)
    return json.loads(m.group(1)) if m else json.loads(line)["unit"]["unit_id"]


def read_latest(path: Path, only: set[str] | None = None) -> Iterator[dict[str, Any]]:
    """The latest record of each unit (of those in ``only``), in journal order, one at a time.

    Two passes over the file: the first reads only each line's unit id, the second parses only the
    lines kept, so memory holds one record and an index, and a sample costs what it keeps.
    """
    journal = path / JOURNAL
    if not journal.exists():
        return
    latest: dict[str, int] = {}
    with journal.open("rb") as f:
        for i, line in enumerate(f):
            if not line.endswith(b"\n"):
                break
            unit_id = _unit_id(line)
            if only is None or unit_id in only:
                latest[unit_id] = i
    keep = set(latest.values())
    with journal.open("rb") as f:
        for i, line in enumerate(f):
            if i in keep:
                yield json.loads(line)


def finished_units(path: Path) -> dict[str, str]:
    """unit_id -> unit hash of every game with a known result (skipped on resume)."""
    done: dict[str, str] = {}
    for rec in read_records(path):
        unit = rec["unit"]
        if rec["outcome"]["known"]:
            done[unit["unit_id"]] = unit["hash"]
        else:
            done.pop(unit["unit_id"], None)
    return done


class GameJournal:
    """The driver's appender: games that finished together go in one write and one fsync."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file = None

    def append_many(self, records: list[dict[str, Any]]) -> None:
        if self._file is None:
            journal = self.path / JOURNAL
            _repair_tail(journal)
            self._file = journal.open("ab")
        self._file.write(b"".join(json.dumps(r, default=str).encode() + b"\n" for r in records))
        self._file.flush()
        os.fsync(self._file.fileno())

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def _repair_tail(path: Path) -> None:
    """Cut a torn last line left by a kill, so the next append starts clean."""
    if not path.exists() or path.stat().st_size == 0:
        return
    data = path.read_bytes()
    if not data.endswith(b"\n"):
        path.write_bytes(data[: data.rfind(b"\n") + 1])
