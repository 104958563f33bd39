"""``calls.journal.jsonl``: every paid model call, written the moment its reply returns (turn-level resume).

Three kinds of line. A ``CallEntry`` is a paid reply, replayed free on resume. A ``VoidEntry`` takes the
replies journaled before it under its call id out of replay: they stay paid (the budget counts them) but
are asked again; replies journaled after a void replay as usual, so a void never reaches a later
invocation's reply. A ``SpendEntry`` is a paid call whose reply is not journaled (``run.journal_calls=false``):
only its cost, so the budget still counts it in every later invocation, and nothing replays it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Annotated, Any

from pydantic import ConfigDict, Discriminator, Tag, TypeAdapter

from bargain_ray.core.records import Reply, Served
from bargain_ray.store.jsonl import Appender, JournalLine, encode_line, read_lines
from bargain_ray.store.paths import CALLS_JOURNAL


class CallEntry(JournalLine):
    """A paid reply: the unit and call it belongs to, the digest of the prompt it answered, the reply."""

    model_config = ConfigDict(extra="forbid")

    unit_id: str
    call_id: str
    prompt: str
    """Digest of the prompt as sent: a reply replays only for the very same prompt."""
    reply: Reply


class VoidEntry(JournalLine):
    """The replies journaled so far under ``call_id`` are asked again on resume (``void`` says why)."""

    model_config = ConfigDict(extra="forbid")

    unit_id: str
    call_id: str
    void: str


class SpendEntry(JournalLine):
    """A paid call whose reply is not journaled: what it cost, what it used, the 429s it met and what served it,
    for the budget and for every reader of what was paid (``store.paid``), in every later invocation too."""

    model_config = ConfigDict(extra="forbid")

    unit_id: str
    call_id: str
    cost_usd: float
    model: str = ""
    """``provider:model`` (``core.records.model_key``)."""
    input_tokens: int = 0
    output_tokens: int = 0
    rate_limited: int = 0
    """429s its failed attempts met before it was answered (none recorded before journal format 4)."""
    served: Served = Served()
    """What the provider reported as served (none recorded before journal format 4)."""

    @classmethod
    def of(cls, unit_id: str, call_id: str, reply: Reply) -> SpendEntry:
        """What a paid reply leaves in the journal when its reply is not journaled."""
        return cls(unit_id=unit_id, call_id=call_id, cost_usd=reply.cost_usd, model=reply.key,
                   input_tokens=reply.usage.input_tokens, output_tokens=reply.usage.output_tokens,
                   rate_limited=reply.rate_limited, served=reply.served())


Entry = CallEntry | VoidEntry | SpendEntry
"""A line of the call journal."""


def _kind(line: Any) -> str | None:
    """Which entry a line is, by the field only it has (lines carry no tag: version 1 had none)."""
    return next((key for key in ("reply", "void", "cost_usd") if key in line), None) if isinstance(line, dict) else None


CallLine = Annotated[
    Annotated[CallEntry, Tag("reply")] | Annotated[VoidEntry, Tag("void")] | Annotated[SpendEntry, Tag("cost_usd")],
    Discriminator(_kind, custom_error_type="call_entry",
                  custom_error_message="not an object with a reply, a void or a cost_usd"),
]
_CALL_LINE: TypeAdapter[Entry] = TypeAdapter(CallLine)


def calls_journal_path(path: Path) -> Path:
    return path / CALLS_JOURNAL


def parse_call_line(line: bytes) -> Entry:
    return _CALL_LINE.validate_json(line)


def read_call_lines(path: Path) -> Iterator[Entry]:
    """Every entry of the sweep folder ``path``'s call journal, oldest first (torn tail skipped, corrupt refused)."""
    return read_lines(calls_journal_path(path), parse_call_line)


def line_key(line: bytes) -> bytes:
    """What identifies a written line: a restarted journal writes an entry only if no line has these bytes."""
    return hashlib.blake2b(line, digest_size=16).digest()


class CallJournal:
    """Appends one line per paid call (or void), fsynced before the caller goes on (run inside a Ray actor).

    ``indexed``: first read the key of every line already written, and write an entry only if it is not
    there yet. A journal restarted after its process died is indexed: a call whose append was in flight then
    reaches it again (Ray retries it), and may already be on disk.
    """

    def __init__(self, file: str, indexed: bool = False) -> None:
        path = Path(file)
        self._written = {line_key(b) for b in read_lines(path, bytes)} if indexed else set()
        self._appender = Appender(path)

    def append(self, *entries: Entry) -> None:
        """``entries`` in one write (a game's voids go together)."""
        self.append_lines(*map(encode_line, entries))

    def append_lines(self, *lines: bytes) -> None:
        """Entries already encoded (``encode_line``) in one write: what a game runner sends the journal actor, so
        Ray carries bytes rather than pickling each entry's models (and the actor decodes nothing)."""
        self._appender.write(b"".join(line for line in lines if line_key(line) not in self._written))

    def close(self) -> None:
        self._appender.close()


def replayable(entries: Iterable[Entry], skip: set[str],
               only: set[str] | None = None) -> dict[str, list[CallEntry]]:
    """unit_id -> its journaled replies, oldest first, for every unit not in ``skip`` (the finished ones; of those
    in ``only``), without the ones a later void took out of replay."""
    out: dict[str, list[CallEntry]] = {}
    for entry in entries:
        unit = entry.unit_id
        if unit in skip or (only is not None and unit not in only):
            continue
        if isinstance(entry, VoidEntry):
            out[unit] = [e for e in out.get(unit, []) if e.call_id != entry.call_id]
        elif isinstance(entry, CallEntry):
            out.setdefault(unit, []).append(entry)
    return out


def read_calls(path: Path, skip: set[str], only: set[str] | None = None) -> dict[str, list[CallEntry]]:
    """``replayable`` over the call journal of the sweep folder ``path``."""
    return replayable(read_call_lines(path), skip, only)
