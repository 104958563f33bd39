"""``journal.jsonl``: one line per finished game, appended durably by the driver."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bargain_ray.store.jsonl import Appender, read_lines
from bargain_ray.store.paths import JOURNAL


def read_records(path: Path) -> Iterator[dict[str, Any]]:
    """Every journaled game of the sweep folder ``path``, oldest first; a torn last line is skipped,
    a corrupt one refused (``CorruptJournal``)."""
    return read_lines(path / JOURNAL)


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
        self._appender = Appender(path / JOURNAL)

    def append_many(self, records: list[dict[str, Any]]) -> None:
        self._appender.append(records)

    def close(self) -> None:
        self._appender.close()
