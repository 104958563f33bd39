"""``calls.journal.jsonl``: every paid model reply, written the moment it returns (turn-level resume)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bargain_ray.store.jsonl import Appender, read_lines
from bargain_ray.store.paths import CALLS_JOURNAL


def calls_journal_path(path: Path) -> Path:
    return path / CALLS_JOURNAL


class CallJournal:
    """Appends one line per reply, fsynced before the caller goes on (run inside a Ray actor)."""

    def __init__(self, file: str) -> None:
        self._appender = Appender(Path(file))

    def append(self, entry: dict[str, Any]) -> None:
        self._appender.append([entry])

    def close(self) -> None:
        self._appender.close()


def read_calls(path: Path, skip: set[str]) -> dict[str, list[dict[str, Any]]]:
    """Journaled replies of every unit of the sweep folder ``path`` not in ``skip`` (the finished ones)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for entry in read_lines(calls_journal_path(path)):
        if entry["unit_id"] not in skip:
            out.setdefault(entry["unit_id"], []).append(entry)
    return out


def paid_calls(path: Path) -> list[tuple[str, float]]:
    """(unit_id, cost_usd) of every reply journaled in the sweep folder ``path``, oldest first: what it has paid."""
    return [(e["unit_id"], float(e["reply"].get("cost_usd", 0.0))) for e in read_lines(calls_journal_path(path))]
