"""The parquet tables of a sweep folder, rebuilt from the game journal and published as one set.

``write_tables`` builds the three files in a temporary folder, each stamped with one generation id
in its parquet metadata, moves them over the top-level files (``os.replace``, so never a 0-byte
file), then writes ``tables.json`` naming that generation, how much of the journal it covers and the
digest of each file's bytes. A kill between two moves leaves files of two generations; ``read_tables``
then (and whenever the journal has grown since, or a file's bytes are not those published: a corrupt
page behind an intact footer) rebuilds the same rows from the journal in memory, so a reader sees one
complete set that matches the journal, and never writes the folder.

The tables hold the folder's current design: the games of units an earlier design had and the current one
leaves out stay in the journal, never in a table (``Manifest.left_out``).
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import polars as pl
from pydantic import BaseModel, ValidationError

from bargain_ray.core.hashing import file_digest
from bargain_ray.core.records import GameRecord
from bargain_ray.store.journal import read_latest
from bargain_ray.store.jsonl import complete_size
from bargain_ray.store.manifest import read_manifest
from bargain_ray.store.paths import JOURNAL, MANIFEST, TABLES_MARKER
from bargain_ray.store.rows import SCHEMAS, References, record_rows, rows_frame

TABLES = ("games", "turns", "calls")
GENERATION_KEY = "bargain_ray.generation"
"""Parquet key-value metadata naming the ``write_tables`` run a file came from."""


class TableSet(BaseModel):
    """``tables.json``: the published set."""

    generation: str
    journal_bytes: int
    """Complete bytes of the journal the set was built from."""
    rows: dict[str, int]
    designs: int = 1
    """How many designs the folder had when the set was built: a set built for an earlier design is stale."""
    digests: dict[str, str] = {}
    """Each file's ``file_digest`` as published: a file whose bytes changed since is not the set (none in a set
    published before digests were kept: such a set is rebuilt, never read unchecked)."""


def add_rows(rows: dict[str, list[dict[str, Any]]], rec: GameRecord, references: References | None = None) -> None:  # free-form: polars rows
    """A record's rows appended to each table's list (its calls' drift against ``references``)."""
    for name, more in record_rows(rec, references).items():
        rows[name].extend(more)


def designs(path: Path) -> int:
    """How many designs the sweep folder ``path`` has had (1 for a folder without a manifest)."""
    return len(read_manifest(path).history()) if (path / MANIFEST).exists() else 1


def tabled_records(path: Path) -> tuple[Iterator[GameRecord], References]:
    """(the latest record of each unit of the sweep folder ``path`` that its current design holds, one at a time;
    each model's drift reference): every unit and no reference in a folder without a manifest."""
    manifest = read_manifest(path) if (path / MANIFEST).exists() else None
    left_out = manifest.left_out() if manifest else None
    records = (rec for rec in read_latest(path) if left_out is None or not left_out(rec.unit))
    return records, manifest.served if manifest else {}


Refigure = Callable[[GameRecord], GameRecord]
"""A journaled record with its figures recomputed (``rescore``): the journal keeps the record as it was."""


def write_tables(path: Path, chunk: int = 2000, *, refigure: Refigure | None = None,
                 generation: str | None = None) -> dict[str, int]:
    """games/turns/calls parquet from the journal, the latest record of each unit (each passed through
    ``refigure`` first when given), published as ``generation`` (a fresh id unless given).

    Streams the journal in chunks of ``chunk`` games so the driver's memory
    stays flat however long the sweep is.
    """
    for stale in path.glob(".tables-*"):  # left by a kill
        shutil.rmtree(stale, ignore_errors=True)
    generation = generation or new_generation()
    work = path / f".tables-{generation}"
    try:
        return _publish(path, work, generation, chunk, refigure)
    finally:  # also on a full disk: the space goes back
        shutil.rmtree(work, ignore_errors=True)


def new_generation() -> str:
    """A fresh table generation id."""
    return uuid.uuid4().hex


def _publish(path: Path, work: Path, generation: str, chunk: int, refigure: Refigure | None) -> dict[str, int]:
    journal_bytes = complete_size(path / JOURNAL)
    parts = work / "parts"
    parts.mkdir(parents=True)
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name in TABLES}  # free-form: rows as polars takes them
    written: dict[str, list[Path]] = {name: [] for name in TABLES}

    def flush() -> None:
        for name, batch in rows.items():
            if batch:
                part = parts / f"{name}-{len(written[name]):05d}.parquet"
                rows_frame(name, batch).write_parquet(part)
                written[name].append(part)
                batch.clear()

    records, references = tabled_records(path)
    for rec in records:
        add_rows(rows, refigure(rec) if refigure else rec, references)
        if len(rows["games"]) >= chunk:
            flush()
    flush()
    stamp = {GENERATION_KEY: generation}
    counts, digests = {}, {}
    for name, paths in written.items():
        target = work / f"{name}.parquet"
        if paths:
            # Journal order is block order up to games finishing out of turn; no global sort,
            # so memory stays flat in the number of games.
            frame = pl.concat([pl.scan_parquet(p) for p in paths], how="diagonal_relaxed")
            frame.sink_parquet(target, row_group_size=chunk, metadata=stamp)  # small row groups: the writer buffers one
        else:
            pl.DataFrame(schema=SCHEMAS[name]).write_parquet(target, metadata=stamp)
        counts[name] = pl.scan_parquet(target).select(pl.len()).collect().item()
        _fsync(target)
        digests[name] = file_digest(target)
    for name in TABLES:
        os.replace(work / f"{name}.parquet", path / f"{name}.parquet")
    marker = work / TABLES_MARKER
    marker.write_text(TableSet(generation=generation, journal_bytes=journal_bytes, rows=counts,
                               designs=designs(path), digests=digests).model_dump_json())
    _fsync(marker)
    os.replace(marker, path / TABLES_MARKER)
    _fsync(path)
    return counts


def _fsync(file: Path) -> None:
    fd = os.open(file, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def published(path: Path) -> bool:
    """Whether the top-level parquet files are one complete set built from the journal as it is now."""
    return published_generation(path) is not None


def published_generation(path: Path) -> str | None:
    """The generation of the top-level parquet set when it is one complete set built from the journal as it is
    now, each file's bytes as published, else None."""
    marker = path / TABLES_MARKER
    if not marker.exists():
        return None
    try:
        table_set = TableSet.model_validate_json(marker.read_bytes())
    except ValidationError:
        return None
    if table_set.journal_bytes != complete_size(path / JOURNAL) or table_set.designs != designs(path):
        return None
    for name in TABLES:
        file = path / f"{name}.parquet"
        try:
            meta = pl.read_parquet_metadata(file)
        except (OSError, pl.exceptions.PolarsError):
            return None
        if meta.get(GENERATION_KEY) != table_set.generation or not written_by_this_code(file, name) \
                or table_set.digests.get(name) != file_digest(file):
            return None
    return table_set.generation


def written_by_this_code(file: Path, name: str) -> bool:
    """Whether ``file`` has every column this code writes in table ``name``: a set an older bargain_ray
    published (before ``drift`` or ``sent_at`` were kept, say) is rebuilt from the journal, never read short."""
    return set(SCHEMAS[name]) <= set(pl.read_parquet_schema(file))


def read_tables(path: Path) -> dict[str, pl.DataFrame]:
    """The tables of the sweep folder ``path``: the published parquet set, or (when there is none, it
    is mixed, or the journal has grown since) the same rows built in memory from the journal."""
    if published(path):
        return {name: pl.read_parquet(path / f"{name}.parquet") for name in TABLES}
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name in TABLES}  # free-form: rows as polars takes them
    records, references = tabled_records(path)
    for rec in records:
        add_rows(rows, rec, references)
    return {name: rows_frame(name, r) for name, r in rows.items()}


def scan_tables(path: Path) -> dict[str, pl.LazyFrame]:
    """The tables of the sweep folder ``path`` as lazy scans (analysis streams them): the published set,
    or the same rows built in memory from the journal when there is none or it is stale."""
    if published(path):
        return {name: pl.scan_parquet(path / f"{name}.parquet") for name in TABLES}
    return {name: frame.lazy() for name, frame in read_tables(path).items()}
