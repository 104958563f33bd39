"""``journal.jsonl``: one line per finished game, appended durably by the driver, read back as ``GameRecord``."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict
from pydantic_core import from_json

from bargain_ray.core.errors import Failure
from bargain_ray.core.records import GameRecord
from bargain_ray.store.jsonl import Appender, CorruptJournal, JournalLine, corrupt, line_at, read_lines
from bargain_ray.store.paths import JOURNAL


class JournaledRecord(GameRecord, JournalLine):
    """A game as its journal line holds it: the record and the line's format version."""

    model_config = ConfigDict(title="GameRecord")


_RECORD_FIELDS = tuple(GameRecord.model_fields)


def parse_record(line: bytes) -> GameRecord:
    """One journal line as the model the driver wrote (pydantic parses the bytes: no dict in between); its
    version checked, then left behind: the record read back is a ``GameRecord`` like the one written."""
    return _record(JournaledRecord.model_validate_json(line))


def _record(read: JournaledRecord) -> GameRecord:
    return GameRecord.model_construct(**{name: getattr(read, name) for name in _RECORD_FIELDS})


def read_records(path: Path) -> Iterator[GameRecord]:
    """Every journaled game of the sweep folder ``path``, oldest first; a torn last line is skipped,
    a corrupt one refused (``CorruptJournal``)."""
    return read_lines(path / JOURNAL, parse_record)


class UnitHead(BaseModel):
    unit_id: str
    hash: str


class OutcomeHead(BaseModel):
    known: bool
    reason: str
    failure: Failure | None = None


class RecordHead(JournalLine):
    """What a resume, the budget and the progress read of a journaled game: its unit's id and hash,
    whether its result is known and why it ended, and the line's version (a newer one is refused). The
    rest of the line is skipped, not validated (a resume of a large sweep reads every line)."""

    unit: UnitHead
    outcome: OutcomeHead


def read_heads(path: Path) -> Iterator[RecordHead]:
    """``read_records`` with only each record's head validated: oldest first, torn tail skipped, corrupt refused."""
    return read_lines(path / JOURNAL, RecordHead.model_validate_json)


class _UnitId(BaseModel):
    unit_id: str


class _UnitIdHead(BaseModel):
    """What ``index_latest`` reads of a line: its unit's id."""

    unit: _UnitId


HEAD_BYTES = 256
"""``GameJournal`` writes the unit first, so a line's first bytes hold its unit id (ours: ids are far shorter)."""


def _unit_id(line: bytes) -> str:
    """The unit id of a journal line, parsed from the line's head as partial JSON (a resume of a large sweep
    reads every line; the rest of the line is not read); a line whose head does not hold it is parsed whole."""
    try:
        return _UnitIdHead.model_validate(from_json(line[:HEAD_BYTES], allow_partial=True)).unit.unit_id
    except ValueError:
        return _UnitIdHead.model_validate_json(line).unit.unit_id


def index_latest(path: Path) -> dict[str, int]:
    """unit_id -> byte offset of the unit's latest line, in journal order; reads only each line's head."""
    journal = path / JOURNAL
    latest: dict[str, int] = {}
    if not journal.exists():
        return latest
    offset = 0
    with journal.open("rb") as f:
        for number, line in enumerate(f, start=1):
            if not line.endswith(b"\n"):
                break
            try:
                unit_id = _unit_id(line)
            except (ValueError, KeyError, TypeError) as exc:
                raise CorruptJournal(journal, number, type(exc).__name__) from None
            latest.pop(unit_id, None)
            latest[unit_id] = offset
            offset += len(line)
    return latest


def read_at(path: Path, offsets: list[int]) -> Iterator[GameRecord]:
    """The records at ``offsets`` (from ``index_latest``), in that order, one at a time."""
    if not offsets:
        return
    journal = path / JOURNAL
    with journal.open("rb") as f:
        for offset in offsets:
            f.seek(offset)
            line = f.readline()
            try:
                yield parse_record(line)
            except ValueError as exc:
                raise corrupt(journal, line_at(journal, offset), exc) from None


def read_latest(path: Path, only: set[str] | None = None) -> Iterator[GameRecord]:
    """The latest record of each unit (of those in ``only``), in journal order, one at a time.

    One pass reads only each line's unit id; then only the lines kept are read and parsed, so
    memory holds one record and an index, and a sample costs what it keeps.
    """
    latest = index_latest(path)
    offsets = sorted(o for u, o in latest.items() if only is None or u in only)
    return read_at(path, offsets)


class JournaledUnits(NamedTuple):
    """The units of a game journal as a resume reads them."""

    finished: dict[str, str]
    """unit_id -> unit hash of every game whose latest record has a known result (skipped on resume)."""
    lines: dict[str, int]
    """unit_id -> the first line holding a record of it (known or not), to name a record the design lacks."""


def journaled_units(path: Path) -> JournaledUnits:
    """The units of the sweep folder ``path``'s game journal, in one pass over the lines' heads."""
    done: dict[str, str] = {}
    lines: dict[str, int] = {}
    for number, head in enumerate(read_heads(path), 1):  # read_lines yields one head per complete line
        lines.setdefault(head.unit.unit_id, number)
        if head.outcome.known:
            done[head.unit.unit_id] = head.unit.hash
        else:
            done.pop(head.unit.unit_id, None)
    return JournaledUnits(done, lines)


class GameJournal:
    """The driver's appender: games that finished together go in one write and one fsync.

    Records are serialized here, once, as their JSON dump in ``store.jsonl``'s line format
    (``{"unit": {"unit_id": ...`` at the head, as the index reads it; ``version`` last): the workers hand
    over models.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._appender = Appender(path / JOURNAL)

    def append_many(self, records: Iterable[GameRecord]) -> None:
        self._appender.append(records)

    def close(self) -> None:
        self._appender.close()
