"""The parquet tables of a sweep folder, rebuilt from the game journal."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import polars as pl

from bargain_ray.store.journal import read_latest
from bargain_ray.store.rows import SCHEMAS, record_rows, rows_frame

TABLES = ("games", "turns", "calls")


def write_tables(path: Path, chunk: int = 2000) -> dict[str, int]:
    """games/turns/calls parquet from the journal, the latest record of each unit.

    Streams the journal in chunks of ``chunk`` games so the driver's memory
    stays flat however long the sweep is.
    """
    parts = path / ".parts"
    shutil.rmtree(parts, ignore_errors=True)
    parts.mkdir()
    rows: dict[str, list[dict[str, Any]]] = {"games": [], "turns": [], "calls": []}
    written: dict[str, list[Path]] = {name: [] for name in rows}

    def flush() -> None:
        for name, batch in rows.items():
            if batch:
                path = parts / f"{name}-{len(written[name]):05d}.parquet"
                rows_frame(name, batch).write_parquet(path)
                written[name].append(path)
                batch.clear()

    for rec in read_latest(path):
        for name, more in record_rows(rec).items():
            rows[name].extend(more)
        if len(rows["games"]) >= chunk:
            flush()
    flush()
    counts = {}
    for name, paths in written.items():
        target = path / f"{name}.parquet"
        if paths:
            # Journal order is block order up to games finishing out of turn; no global sort,
            # so memory stays flat in the number of games.
            frame = pl.concat([pl.scan_parquet(p) for p in paths], how="diagonal_relaxed")
            frame.sink_parquet(target, row_group_size=chunk)  # small row groups: the writer buffers one
        else:
            pl.DataFrame(schema=SCHEMAS[name]).write_parquet(target)
        counts[name] = pl.scan_parquet(target).select(pl.len()).collect().item()
    shutil.rmtree(parts)
    return counts




def read_tables(path: Path) -> dict[str, pl.DataFrame]:
    """The tables of the sweep folder ``path``: the parquet files, or (before they are written) the same
    rows built in memory from the journal, so a reader never writes the folder."""
    if all((path / f"{name}.parquet").exists() for name in TABLES):
        return {name: pl.read_parquet(path / f"{name}.parquet") for name in TABLES}
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name in TABLES}
    for rec in read_latest(path):
        for name, more in record_rows(rec).items():
            rows[name].extend(more)
    return {name: rows_frame(name, r) for name, r in rows.items()}


def scan_tables(path: Path) -> dict[str, pl.LazyFrame]:
    """The tables of the sweep folder ``path`` as lazy scans (analysis streams them); before the files
    are written, the same rows built in memory from the journal."""
    if all((path / f"{name}.parquet").exists() for name in TABLES):
        return {name: pl.scan_parquet(path / f"{name}.parquet") for name in TABLES}
    return {name: frame.lazy() for name, frame in read_tables(path).items()}
