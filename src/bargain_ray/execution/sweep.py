"""One sweep from a validated config: plan, resume, run, tables, summary."""

from __future__ import annotations

import sys
from pathlib import Path

from bargain_ray.analysis.report import build_report
from bargain_ray.config import SweepConfig
from bargain_ray.design import estimate
from bargain_ray.execution.driver import run_units
from bargain_ray.execution.plan import plan
from bargain_ray.execution.progress import summary
from bargain_ray.providers import missing_keys, provider_service
from bargain_ray.store import (
    CorruptJournal,
    DiskFull,
    FolderLocked,
    GameJournal,
    hold_lock,
    is_disk_full,
    write_status,
    write_tables,
)

DISK_FULL_EXIT = 74
"""Exit code of a run stopped by a full disk (sysexits' EX_IOERR); run it again once there is room."""


def sweep_dir(sweep: SweepConfig) -> Path:
    return Path(sweep.run.dir) if sweep.run.dir else Path("outputs") / sweep.grid.name


def check_keys(sweep: SweepConfig) -> None:
    """Stop before the first call, naming the missing key and the offline way."""
    missing = missing_keys(sweep)
    if missing:
        raise SystemExit(
            f"error: {', '.join(missing)} is not set, and grid {sweep.grid.name!r} calls real providers. "
            f"Set it in the environment, or rehearse offline with "
            f"`python -m bargain_ray +grid={sweep.grid.name} provider=sim` "
            "(simulated provider) or `+grid=demo` (strategy agents)."
        )


def run_sweep(sweep: SweepConfig) -> int:
    """Run (or resume) a sweep holding its folder's lock; returns a process exit code.

    A dry run takes the lock too: it may write the manifest, and every writer of the folder holds it.
    A full disk ends the run with no tables attempted; the journals keep every line already written.
    """
    if not sweep.run.dry_run:
        check_keys(sweep)
    path = sweep_dir(sweep)
    try:
        with hold_lock(path):
            return _run_locked(sweep, path)
    except (FolderLocked, CorruptJournal) as exc:
        raise SystemExit(f"error: {exc}") from None
    except Exception as exc:
        if not is_disk_full(exc):
            raise
        print(f"error: {DiskFull(path)}", file=sys.stderr)
        return DISK_FULL_EXIT


def _run_locked(sweep: SweepConfig, path: Path) -> int:
    todo, count, done = plan(sweep, path)
    finished = len(done)
    print(f"grid {sweep.grid.name}: {count + finished} units, {finished} finished, {count} to run")
    if sweep.run.dry_run:
        print(estimate(sweep, list(todo())))
        return 0
    write_status(path, "running", count + finished)
    with provider_service(sweep) as served:
        tally, interrupted = run_units(served, todo(), count, GameJournal(path), path, done)
    counts = write_tables(path)
    write_status(path, "interrupted" if interrupted else "ended", count + finished)
    print(summary(tally, path, finished, interrupted, counts))
    if sweep.run.report and not interrupted:
        print(f"report: {build_report(path)}")
    return 130 if interrupted else 0

