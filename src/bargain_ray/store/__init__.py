"""The sweep folder: the only code that knows its layout and reads or writes it.

``manifest.json`` fixes what determines the sweep's games; ``journal.jsonl``
holds one line per finished game; ``calls.journal.jsonl`` one per paid call (its reply, or its cost)
(both through ``jsonl``); ``batches.journal.jsonl`` one per batch sent through a batch API;
``driver.lock`` keeps one driver per folder; ``status.json`` says how many units the plan has;
the parquet tables are rebuilt from the journal and published as one set (``tables.json``).
"""

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bargain_ray.store.batches import BatchIntent, JournaledBatch, NoBatch, read_batch_journal, read_batches
    from bargain_ray.store.calls import (
        CallEntry,
        CallJournal,
        SpendEntry,
        VoidEntry,
        read_call_lines,
        read_calls,
    )
    from bargain_ray.store.journal import (
        GameJournal,
        RecordHead,
        index_latest,
        journaled_units,
        read_at,
        read_heads,
        read_latest,
        read_records,
    )
    from bargain_ray.store.jsonl import CorruptJournal, DiskFull, is_disk_full
    from bargain_ray.store.lock import FolderLocked, FolderUnwritable, Holder, hold_lock, lock_holder
    from bargain_ray.store.manifest import ChangedConfig, Manifest, UnreadableManifest, open_manifest, read_manifest
    from bargain_ray.store.paid import Spend, SpendTail, read_spend
    from bargain_ray.store.paths import BATCHES_JOURNAL, CALLS_JOURNAL, DATASET, JOURNAL, MANIFEST, REPORT
    from bargain_ray.store.rows import SCHEMAS, CallRow, call_row, game_row, record_rows, turn_rows
    from bargain_ray.store.status import Progress, read_progress, write_status
    from bargain_ray.store.tables import TABLES, read_tables, scan_tables, write_tables

_MODULE_OF = {
    **dict.fromkeys(("BatchIntent", "JournaledBatch", "NoBatch", "read_batch_journal", "read_batches"), "batches"),
    **dict.fromkeys(("CallEntry", "CallJournal", "SpendEntry", "VoidEntry", "read_call_lines",
                     "read_calls"), "calls"),
    **dict.fromkeys(("GameJournal", "RecordHead", "index_latest", "journaled_units", "read_at", "read_heads",
                     "read_latest", "read_records"), "journal"),
    **dict.fromkeys(("CorruptJournal", "DiskFull", "is_disk_full"), "jsonl"),
    **dict.fromkeys(("FolderLocked", "FolderUnwritable", "Holder", "hold_lock", "lock_holder"), "lock"),
    **dict.fromkeys(("Spend", "SpendTail", "read_spend"), "paid"),
    **dict.fromkeys(("ChangedConfig", "Manifest", "UnreadableManifest", "open_manifest", "read_manifest"), "manifest"),
    **dict.fromkeys(("BATCHES_JOURNAL", "CALLS_JOURNAL", "DATASET", "JOURNAL", "MANIFEST", "REPORT"), "paths"),
    **dict.fromkeys(("SCHEMAS", "CallRow", "call_row", "game_row", "record_rows", "turn_rows"), "rows"),
    **dict.fromkeys(("Progress", "read_progress", "write_status"), "status"),
    **dict.fromkeys(("TABLES", "read_tables", "scan_tables", "write_tables"), "tables"),
}


def __getattr__(name: str) -> object:
    """Each name loads its module on first use: an actor process imports only the store modules it uses (the call
    journal's, ``calls``, about 0.25 s of CPU less than every module's), and the tables (polars, half a second)
    load only where they are written or read."""
    if name in _MODULE_OF:
        return getattr(import_module(f"bargain_ray.store.{_MODULE_OF[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "BATCHES_JOURNAL", "BatchIntent", "JournaledBatch", "NoBatch", "read_batch_journal", "read_batches",
    "CALLS_JOURNAL", "DATASET", "JOURNAL", "MANIFEST", "REPORT", "SCHEMAS", "TABLES", "CallEntry", "CallJournal", "CallRow",
    "SpendEntry", "VoidEntry", "read_call_lines",
    "ChangedConfig", "CorruptJournal", "DiskFull", "FolderLocked", "FolderUnwritable", "GameJournal", "Holder", "Manifest", "Progress",
    "RecordHead", "Spend", "SpendTail", "UnreadableManifest",
    "call_row", "game_row", "hold_lock", "index_latest", "is_disk_full", "journaled_units", "lock_holder",
    "open_manifest", "read_at", "read_calls", "read_heads", "read_latest", "read_manifest", "read_progress",
    "read_records", "read_spend", "read_tables", "record_rows", "scan_tables", "turn_rows", "write_status", "write_tables",
]
