"""One sweep from a validated config: plan, resume, run, tables, summary."""

from __future__ import annotations

import sys
from pathlib import Path

from bargain_ray.analysis.report import build_report
from bargain_ray.config import SweepConfig
from bargain_ray.core.status import ExitCode
from bargain_ray.design import ResolvedSweep, estimate, resolve
from bargain_ray.execution.driver import run_units
from bargain_ray.execution.plan import plan
from bargain_ray.execution.progress import summary
from bargain_ray.execution.signals import stop_on_signals
from bargain_ray.play.probe import typical_calls
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


def sweep_dir(sweep: SweepConfig) -> Path:
    """``run.dir``, else ``outputs/<grid name>/`` for real providers and ``outputs/<grid name>-sim/`` (``-local/``)
    for a rehearsal, so a rehearsal and the real run of one grid never share a folder by default."""
    if sweep.run.dir:
        return Path(sweep.run.dir)
    suffix = "" if sweep.provider.name == "default" else f"-{sweep.provider.name}"
    return Path("outputs") / f"{sweep.grid.name}{suffix}"


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


def run_sweep(sweep: ResolvedSweep | SweepConfig) -> int:
    """Run (or resume) a sweep holding its folder's lock; returns a process exit code.

    ``sweep`` is resolved first (``design.resolve``: a ``SweepConfig`` is checked as the command line checks it).

    A dry run takes the lock too: it may write the manifest, and every writer of the folder holds it.
    A full disk ends the run with no tables attempted; the journals keep every line already written.
    """
    sweep = resolve(sweep)
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
        return ExitCode.DISK_FULL


def _run_locked(sweep: SweepConfig, path: Path) -> int:
    todo, count, done = plan(sweep, path)
    finished = len(done)
    print(f"grid {sweep.grid.name}: {count + finished} units, {finished} finished, {count} to run")
    if sweep.run.dry_run:
        print(estimate(sweep, list(todo()), typical_calls))
        return 0
    write_status(path, "running", count + finished)
    with stop_on_signals() as stop:  # SIGINT/SIGTERM stop like Ctrl-C: the tables are still written
        with provider_service(sweep) as served:
            result = run_units(served, todo(), count, GameJournal(path), path, done, stop)
        counts = write_tables(path)
        write_status(path, "interrupted" if stop.requested else "ended", count + finished)
        if sweep.run.report and not stop.requested:
            print(f"report: {build_report(path)}")
    print(summary(result, path, finished, counts))  # last: its last line says what is unknown and why
    return stop.exit_code if stop.requested else result.exit_code

