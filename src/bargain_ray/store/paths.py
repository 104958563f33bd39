"""The sweep folder's layout: every file name the project writes, in one place."""

from __future__ import annotations

JOURNAL = "journal.jsonl"
"""One line per finished (or technically failed) game, appended by the driver."""
CALLS_JOURNAL = "calls.journal.jsonl"
"""One line per paid model reply, for turn-level resume."""
BATCHES_JOURNAL = "batches.journal.jsonl"
"""One line per batch created through a provider's batch API: its id and its requests' call ids."""
MANIFEST = "manifest.json"
REPORT = "report.html"
DATASET = "dataset"
LOCK = "driver.lock"
"""Held (flock) by the one driver writing the folder; names its host, pid and start time."""
STATUS = "status.json"
"""The last driver's state (running, finished, interrupted, disk full) and the sweep's unit count."""
TABLES_MARKER = "tables.json"
"""Written last by ``write_tables``: the generation the three parquet files must all carry."""
