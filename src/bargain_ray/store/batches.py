"""``batches.journal.jsonl``: every batch before it is created and the moment the provider accepted it.

A killed sweep's open batches are still being answered at the provider; on resume a call whose id
(and request) is in a journaled batch waits for that batch's results instead of being sent again.

Three kinds of line. A ``BatchIntent`` is written (fsynced) before the create call, under a fresh key the
create sends along where the API takes one (OpenAI's metadata): a batcher killed while the provider accepted
the batch leaves its intent open, and the next one looks the batch up at the provider (by that key, or by
its custom ids) instead of creating it again. A ``JournaledBatch`` is the batch as created (its intent's key
with it), a ``NoBatch`` closes an intent that created nothing (the create failed, or the look-up found none).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from pydantic import ConfigDict, Discriminator, Tag, TypeAdapter

from bargain_ray.store.jsonl import JournalLine, read_lines
from bargain_ray.store.paths import BATCHES_JOURNAL


class BatchIntent(JournalLine):
    """A batch about to be created: its key, its route (``provider:key-hash:model``, never a key), when, and per
    call id the digest of the request it holds."""

    model_config = ConfigDict(extra="forbid")

    intent: str
    api: str
    route: str
    calls: dict[str, str]
    created: float


class JournaledBatch(JournalLine):
    """One batch as created: its id, its route and, per call id, the digest of the request sent, so a resumed call
    reuses the batch only if it asks the same; ``intent`` the key of its intent (none before intents existed)."""

    model_config = ConfigDict(extra="forbid")

    batch_id: str
    api: str
    route: str
    calls: dict[str, str]
    created: float
    intent: str | None = None


class NoBatch(JournalLine):
    """The intent ``intent`` created no batch (``reason`` says how that is known): its calls are sent again."""

    model_config = ConfigDict(extra="forbid")

    intent: str
    reason: str


BatchLine = BatchIntent | JournaledBatch | NoBatch


def _kind(line: Any) -> str | None:
    """Which line it is, by the field only it has (version 1 lines carry no tag)."""
    if not isinstance(line, dict):
        return None
    return next((key for key in ("batch_id", "reason", "calls") if key in line), None)


_BATCH_LINE: TypeAdapter[BatchLine] = TypeAdapter(Annotated[
    Annotated[JournaledBatch, Tag("batch_id")] | Annotated[NoBatch, Tag("reason")]
    | Annotated[BatchIntent, Tag("calls")],
    Discriminator(_kind, custom_error_type="batch_line",
                  custom_error_message="not an object with a batch_id, an intent's calls or a reason"),
])


@dataclass
class BatchJournal:
    """The batch journal read whole: the batches created, and the intents still open (created or not: unknown)."""

    batches: list[JournaledBatch] = field(default_factory=list)
    open: list[BatchIntent] = field(default_factory=list)


def batches_journal_path(path: Path) -> Path:
    return path / BATCHES_JOURNAL


def read_batch_journal(path: Path) -> BatchJournal:
    """Every line of the sweep folder ``path``'s batch journal, oldest first (a torn last line is skipped, a corrupt
    one refused). The batcher appends through ``store.jsonl``'s ``Appender``, fsynced before the create call (an
    intent) and before any of its callers waits on the batch (the batch)."""
    journal, intents = BatchJournal(), {}
    for line in read_lines(batches_journal_path(path), _BATCH_LINE.validate_json):
        if isinstance(line, BatchIntent):
            intents[line.intent] = line
        else:
            intents.pop(line.intent or "", None)
            if isinstance(line, JournaledBatch):
                journal.batches.append(line)
    journal.open = list(intents.values())
    return journal


def read_batches(path: Path) -> list[JournaledBatch]:
    """Every batch created, oldest first."""
    return read_batch_journal(path).batches
