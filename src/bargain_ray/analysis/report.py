"""A sweep's report: metrics, the dataset export (seed 002's layout) and the HTML page.

Built at the end of every sweep and by ``python -m bargain_ray.report``.
"""

from __future__ import annotations

from pathlib import Path

from bargain_ray.analysis.bootstrap import LEVEL, RESAMPLES
from bargain_ray.analysis.build import analyse
from bargain_ray.analysis.export import export
from bargain_ray.analysis.html import partial_banner, render
from bargain_ray.analysis.sweep import read_sweep
from bargain_ray.store import DATASET, REPORT, read_progress


def partial_note(sweep_dir: Path) -> str | None:
    """One line when the sweep is running or unfinished (its tables are then partial), else None."""
    return read_progress(Path(sweep_dir)).note()


def build_report(
    sweep_dir: Path, by: list[str] | None = None, resamples: int = RESAMPLES, level: float = LEVEL, seed: int = 0
) -> Path:
    """Analyse a sweep folder, export its dataset, write its report; returns the report's path.

    A sweep still running or unfinished gets a banner at the top of the page saying so."""
    sweep_dir = Path(sweep_dir)
    note = partial_note(sweep_dir)
    analysis = analyse(read_sweep(sweep_dir), by, resamples, level, seed)
    export(analysis, sweep_dir / DATASET)
    path = sweep_dir / REPORT
    tmp = path.with_suffix(".tmp")
    tmp.write_text(render(analysis).replace("<body>", "<body>" + partial_banner(note), 1), encoding="utf-8")
    tmp.replace(path)
    return path
