"""``calls.journal.jsonl``: every paid model reply, written the moment it returns (turn-level resume)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bargain_ray.store.paths import CALLS_JOURNAL


def calls_journal_path(path: Path) -> Path:
    return path / CALLS_JOURNAL


class CallJournal:
    """Appends one line per reply, fsynced before the caller goes on."""

    def __init__(self, file: str) -> None:
        self._file = Path(file).open("ab")

    def append(self, entry: dict[str, Any]) -> None:
        self._file.write(json.dumps(entry, default=str).encode() + b"\n")
        self._file.flush()
        os.fsync(self._file.fileno())

    def close(self) -> None:
        self._file.close()


def read_calls(path: Path, skip: set[str]) -> dict[str, list[dict[str, Any]]]:
    """Journaled replies of every unit of the sweep folder ``path`` not in ``skip`` (the finished ones)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for entry in read_jsonl(calls_journal_path(path)):
        if entry["unit_id"] not in skip:
            out.setdefault(entry["unit_id"], []).append(entry)
    return out


def paid_calls(path: Path) -> list[tuple[str, float]]:
    """(unit_id, cost_usd) of every reply journaled in the sweep folder ``path``, oldest first: what it has paid."""
    return [(e["unit_id"], float(e["reply"].get("cost_usd", 0.0))) for e in read_jsonl(calls_journal_path(path))]


def read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    """The complete lines of a journal (a torn last line, left by a kill, is skipped)."""
    if not path.exists():
        return
    with path.open("rb") as f:
        for line in f:
            if line.endswith(b"\n"):
                yield json.loads(line)
