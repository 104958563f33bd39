"""The sweep folder: the only code that knows its layout and reads or writes it.

``manifest.json`` fixes what determines the sweep's games; ``journal.jsonl``
holds one line per finished game; ``calls.journal.jsonl`` one per paid reply;
the parquet tables are rebuilt from the journal.
"""

from bargain_ray.store.calls import CallJournal, read_calls
from bargain_ray.store.journal import GameJournal, finished_units, index_latest, read_at, read_latest, read_records
from bargain_ray.store.manifest import ChangedConfig, open_manifest, read_manifest
from bargain_ray.store.paths import CALLS_JOURNAL, DATASET, JOURNAL, MANIFEST, REPORT
from bargain_ray.store.rows import SCHEMAS, call_row, game_row, record_rows, turn_rows
from bargain_ray.store.tables import TABLES, read_tables, scan_tables, write_tables

__all__ = [
    "CALLS_JOURNAL", "DATASET", "JOURNAL", "MANIFEST", "REPORT", "SCHEMAS", "TABLES", "CallJournal",
    "ChangedConfig", "GameJournal", "call_row", "finished_units", "index_latest", "read_at", "game_row", "open_manifest",
    "read_calls", "read_latest", "read_manifest", "read_records", "read_tables", "record_rows", "scan_tables", "turn_rows",
    "write_tables",
]
