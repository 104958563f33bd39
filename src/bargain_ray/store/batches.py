"""``batches.journal.jsonl``: every batch the moment the provider accepted it, with its requests' call ids.

A killed sweep's open batches are still being answered at the provider; on resume a call whose id
(and request) is in a journaled batch waits for that batch's results instead of being sent again.
"""

from __future__ import annotations

from pathlib import Path

from bargain_ray.store.jsonl import JournalLine, read_lines
from bargain_ray.store.paths import BATCHES_JOURNAL


class JournaledBatch(JournalLine):
    """One batch as created: its id, its route (``provider:key-hash:model``, never a key) and, per call id,
    the digest of the request sent, so a resumed call reuses the batch only if it asks the same."""

    batch_id: str
    api: str
    route: str
    calls: dict[str, str]
    created: float


def batches_journal_path(path: Path) -> Path:
    return path / BATCHES_JOURNAL


def read_batches(path: Path) -> list[JournaledBatch]:
    """Every journaled batch of the sweep folder ``path``, oldest first (a torn last line is skipped, a corrupt
    one refused). The batcher appends one line per batch through ``store.jsonl``'s ``Appender``, fsynced
    before any of its callers waits on the batch."""
    return list(read_lines(batches_journal_path(path), JournaledBatch.model_validate_json))
