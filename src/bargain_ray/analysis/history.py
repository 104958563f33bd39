"""The designs a sweep folder was run with, as the report and the card show them (``Manifest.designs``).

A folder grows on resume (more blocks, pairings, models, conditions): every design it had is kept in its manifest,
oldest first, with when it was first run and what it added; the tables hold the last one's units.
"""

from __future__ import annotations

import polars as pl

from bargain_ray.store.manifest import Manifest

COLUMNS = ["design", "first run (UTC)", "grid", "units", "added", "left out", "changed from the design before"]


def design_history(manifest: Manifest) -> pl.DataFrame:
    """One row per design of the folder, oldest first: when, which grid, its units, the units it added and left
    out, and the fields it changed (a folder of one design has one row)."""
    rows = [[i, d.at or "(before designs were kept)", d.grid, d.units, d.added, d.dropped, "; ".join(d.changes)]
            for i, d in enumerate(manifest.history(), start=1)]
    return pl.DataFrame(rows, schema=COLUMNS, orient="row")


def history_note(manifest: Manifest) -> str | None:
    """The sentence that says a folder grew (None for a folder of one design)."""
    designs = manifest.history()
    if len(designs) < 2:
        return None
    return (f"This folder was run with {len(designs)} designs (below); the tables hold the units of the last, "
            f"{manifest.grid}. A unit two designs share was played once and kept; units only an earlier design had "
            "stay in journal.jsonl, out of the tables.")
