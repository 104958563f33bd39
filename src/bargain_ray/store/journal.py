"""``journal.jsonl``: one line per finished game, appended durably by the driver."""

from __future__ import annotations

import json
import os
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
