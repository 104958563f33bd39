"""``judging/``: a judging run's own folder inside the sweep folder, laid out as a sweep folder of reads.

A judging run (``python -m bargain_ray.judge``) writes only here: its manifest (what determines its reads, checked
on every resume as a sweep's is), its journal (one line per finished read), its call and batch journals, its status,
and ``reads.parquet``, one row per read of the current panel (written last, atomically). The sweep's own files are
never written, so a judged folder's games and tables stay byte for byte what its sweep wrote.
"""

from __future__ import annotations

import os
from pathlib import Path

import polars as pl
from pydantic import BaseModel

from bargain_ray.store.paths import HUMANS, JUDGING, READS
from bargain_ray.store.rows import ROWS, schema_of


def judging_dir(path: Path) -> Path:
    """The judging folder of the sweep folder ``path``."""
    return path / JUDGING


class ReadRow(BaseModel):
    """One row of ``judging/reads.parquet``: one read of a finished game by one reader of the panel."""

    model_config = ROWS

    read_id: str
    """the read's id: the judged game's unit id, then -j, the reader's letter, s if swapped, and the repeat"""
    unit_id: str
    """the judged game (join key to games.parquet)"""
    game: str
    """game config name"""
    condition: str
    """protocol condition"""
    cell: str
    """the judged game's cell"""
    pairing: str
    """the judged game's model letters in agent order"""
    seed: int
    """the judged game's block seed: reads are resampled by it"""
    block: int
    """the judged game's replicate block"""
    reader: str
    """the reader's letter: the game's observer keeps the sweep's, another observer has the panel's"""
    reader_model: str
    """the reader's model, as configured"""
    kind: str
    """observer (the game's own observer reading again) or panel (another observer)"""
    same_model: bool
    """the reader's model played one of the judged game's parties"""
    swapped: bool
    """read with the two parties' labels exchanged"""
    names_shown: bool
    """the read named each party's model after its label"""
    repeat: int
    """which read of this reader and variant, from 1"""
    status: str
    """AGREEMENT or NO_AGREEMENT (the read's verdict), or TECHNICAL_ERROR (unreadable, not yet read: read again on
    the judge's next run)"""
    known: bool
    """the read gave a verdict"""
    allocation_type: str | None
    """the read's verdict: integrative_full, integrative_partial, distributive, lopsided or none (null if unknown)"""
    confidence: float | None
    """the reader's confidence in its verdict, 0 to 1"""
    recorded: str
    """the allocation type of the game's final verdict, as the game recorded it (its outcome, never changed)"""
    calls: int
    """the read's calls, repairs included"""
    cost_usd: float
    """what the read's calls cost at the configured prices (a replayed one's too: paid once, when first sent)"""


READ_SCHEMA = schema_of(ReadRow)


LABEL_SCHEMA = pl.Schema({"unit_id": pl.String, "allocation_type": pl.String, "rater": pl.String})
"""``judging/humans.parquet``: the human labels the judge was last given (``--human``), as checked."""


def _replace(frame: pl.DataFrame, target: Path) -> Path:
    """``frame`` written to ``target`` atomically and durably (a kill leaves the old file or the new one)."""
    tmp = target.with_suffix(".tmp")
    frame.write_parquet(tmp)
    fd = os.open(tmp, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, target)
    return target


def write_reads(path: Path, rows: list[ReadRow]) -> Path:
    """``judging/reads.parquet`` of the sweep folder ``path``; returns its path."""
    return _replace(pl.DataFrame([r.model_dump() for r in rows], schema=READ_SCHEMA), judging_dir(path) / READS)


def write_labels(path: Path, labels: pl.DataFrame) -> Path:
    """``judging/humans.parquet`` of the sweep folder ``path`` (the report shows the agreement with them)."""
    return _replace(labels.select(list(LABEL_SCHEMA)).cast(LABEL_SCHEMA), judging_dir(path) / HUMANS)


def _read(target: Path, path: Path) -> pl.DataFrame | None:
    if not target.exists():
        return None
    try:
        return pl.read_parquet(target)
    except (OSError, pl.exceptions.PolarsError) as exc:
        raise OSError(f"{target} cannot be read ({type(exc).__name__}); run python -m bargain_ray.judge "
                      f"{path} again to write it") from None


def read_reads(path: Path) -> pl.DataFrame | None:
    """The reads table of the sweep folder ``path``; None when it was never judged (an unreadable table raises
    ``OSError``, naming the file: the judge's next run writes it again)."""
    return _read(judging_dir(path) / READS, path)


def read_labels(path: Path) -> pl.DataFrame | None:
    """The human labels the judge of the sweep folder ``path`` was last given, None if never."""
    return _read(judging_dir(path) / HUMANS, path)
