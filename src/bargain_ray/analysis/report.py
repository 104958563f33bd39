"""A sweep's report: metrics, the dataset export (seed 002's layout) and the HTML page.

Built at the end of every sweep and by ``python -m bargain_ray.report``. A report grouped otherwise
than by the default cells (``--by``) is written beside the default one (``report-by-pairing.html``),
never over it, and leaves the dataset as the default grouping exported it (our choice: one dataset
per folder, whose by-cell table matches ``report.html``).
"""

from __future__ import annotations

from pathlib import Path

from bargain_ray.analysis.build import DEFAULT_BY, analyse
from bargain_ray.analysis.export import export
from bargain_ray.analysis.html import partial_banner, render
from bargain_ray.analysis.intervals import LEVEL
from bargain_ray.analysis.sweep import read_sweep
from bargain_ray.store import DATASET, REPORT, read_progress


def partial_note(sweep_dir: Path) -> str | None:
    """One line when the sweep is running or unfinished (its tables are then partial), else None."""
    return read_progress(Path(sweep_dir)).note()


def report_name(by: list[str] | None) -> str:
    """``report.html`` for the default cells, ``report-by-<col>-<col>.html`` for any other grouping."""
    if by is None or list(by) == list(DEFAULT_BY):
        return REPORT
    return f"report-by-{'-'.join(by)}.html"


def build_report(sweep_dir: Path, by: list[str] | None = None, level: float = LEVEL) -> Path:
    """Analyse a sweep folder, export its dataset (default cells only), write its report; returns the report's path.

    A sweep still running or unfinished gets a banner at the top of the page saying so."""
    sweep_dir = Path(sweep_dir)
    note = partial_note(sweep_dir)
    analysis = analyse(read_sweep(sweep_dir), by, level)
    name = report_name(by)
    if name == REPORT:
        export(analysis, sweep_dir / DATASET)
    path = sweep_dir / name
    tmp = path.with_suffix(".tmp")
    tmp.write_text(render(analysis).replace("<body>", "<body>" + partial_banner(note), 1), encoding="utf-8")
    tmp.replace(path)
    return path
