"""``calls.journal.jsonl``: every paid model reply, written the moment it returns (turn-level resume).

Two kinds of line: a reply (``unit_id``, ``call_id``, ``prompt``, ``reply``) and a void
(``unit_id``, ``call_id``, ``void``: why), which takes the replies journaled before it under that
call id out of replay: they stay paid (the budget counts them) but are asked again. Replies journaled
after a void replay as usual, so a void never reaches a later invocation's reply.
"""

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

    def void(self, unit_id: str, call_ids: list[str], why: str) -> None:
        """Take these calls' journaled replies out of replay, in one write."""
        self._appender.append([{"unit_id": unit_id, "call_id": c, "void": why} for c in call_ids])

    def close(self) -> None:
        self._appender.close()


def read_calls(path: Path, skip: set[str]) -> dict[str, list[dict[str, Any]]]:
    """Journaled replies of every unit of the sweep folder ``path`` not in ``skip`` (the finished ones), oldest
    first, without the ones a later void line took out of replay."""
    out: dict[str, list[dict[str, Any]]] = {}
    for entry in read_lines(calls_journal_path(path)):
        unit = entry["unit_id"]
        if unit in skip:
            continue
        if "void" in entry:
            out[unit] = [e for e in out.get(unit, []) if e["call_id"] != entry["call_id"]]
        else:
            out.setdefault(unit, []).append(entry)
    return out


def paid_calls(path: Path) -> list[tuple[str, float]]:
    """(unit_id, cost_usd) of every reply journaled in the sweep folder ``path``, oldest first: what it has paid."""
    return [(e["unit_id"], float(e["reply"].get("cost_usd", 0.0)))
            for e in read_lines(calls_journal_path(path)) if "reply" in e]
