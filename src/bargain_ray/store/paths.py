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
