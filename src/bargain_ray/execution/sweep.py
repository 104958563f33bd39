"""One sweep from a validated config: plan, resume, run, tables, summary."""

from __future__ import annotations

import sys
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path

from bargain_ray.config import SweepConfig
from bargain_ray.core.status import ExitCode
from bargain_ray.design import ResolvedSweep, estimate, resolve
from bargain_ray.execution.cluster import ClusterUnavailable, RayChoice, choose_ray, start_ray, watch_cluster
from bargain_ray.execution.driver import run_units
from bargain_ray.execution.plan import plan
from bargain_ray.execution.progress import StartupClock, summary
from bargain_ray.execution.signals import stop_on_signals
from bargain_ray.play.probe import typical_calls
from bargain_ray.providers import key_names, missing_keys, provider_service
from bargain_ray.store import (
    CorruptJournal,
    DiskFull,
    FolderLocked,
    GameJournal,
    hold_lock,
    is_disk_full,
    write_status,
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


def run_sweep(sweep: ResolvedSweep | SweepConfig, started: float | None = None) -> int:
    """Run (or resume) a sweep holding its folder's lock; returns a process exit code. ``started`` is when the
    command started (monotonic; default now), the origin of the summary's start-up line.

    ``sweep`` is resolved first (``design.resolve``: a ``SweepConfig`` is checked as the command line checks it).

    A dry run takes the lock too: it may write the manifest, and every writer of the folder holds it.
    A full disk ends the run with no tables attempted; the journals keep every line already written.
    A Ray that does not answer ends it before anything is started (exit 69).
    """
    sweep = resolve(sweep)
    if not sweep.run.dry_run:
        check_keys(sweep)
    path = sweep_dir(sweep)
    try:
        with hold_lock(path):
            return _run_locked(sweep, path, StartupClock(started))
    except (FolderLocked, CorruptJournal) as exc:
        raise SystemExit(f"error: {exc}") from None
    except ClusterUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return ExitCode.CLUSTER_UNAVAILABLE
    except Exception as exc:
        if not is_disk_full(exc):
            raise
        print(f"error: {DiskFull(path)}", file=sys.stderr)
        return ExitCode.DISK_FULL


def _ray_for(sweep: SweepConfig, plan_line: str, clock: StartupClock, meanwhile: Callable[[], object]) -> RayChoice:
    """Which Ray the run uses, said in the plan line, then joined or started (``meanwhile`` runs as it starts)."""
    choice = choose_ray(sweep.run.ray_timeout_s)
    print(f"{plan_line}; ray: {choice.describe()}", flush=True)
    clock.mark("plan")
    start_ray(choice, key_names(sweep), meanwhile)
    clock.mark("ray")
    return choice


def _run_locked(sweep: SweepConfig, path: Path, clock: StartupClock) -> int:
    with stop_on_signals(running=False) as stop:  # until the games start, a signal ends the command at once
        todo, count, done = plan(sweep, path)
        finished = len(done)
        line = f"grid {sweep.grid.name}: {count + finished} units, {finished} finished, {count} to run"
        if sweep.run.dry_run:
            print(line)
            print(estimate(sweep, list(todo()), typical_calls))
            return 0
        with ExitStack() as service:  # the simulated provider (or local model) starts while Ray does
            served: list[ResolvedSweep] = []
            choice = _ray_for(sweep, line, clock, lambda: served.append(service.enter_context(provider_service(sweep))))
            with watch_cluster(choice, sweep.run.ray_timeout_s):
                write_status(path, "running", count + finished)
                stop.running = True  # from here SIGINT/SIGTERM stop like Ctrl-C: the tables are still written
                result = run_units(served[0], todo(), count, GameJournal(path), path, done, stop, clock)
                service.close()
                from bargain_ray.store import write_tables  # polars: loaded after the games, off the start-up's path

                counts = write_tables(path)
                write_status(path, "interrupted" if stop.requested else "ended", count + finished)
                if sweep.run.report and not stop.requested:
                    from bargain_ray.analysis.report import build_report  # after the games: off the start-up's path

                    print(f"report: {build_report(path)}")
        print(summary(result, path, finished, counts))  # last: its last line says what is unknown and why
        return stop.exit_code if stop.requested else result.exit_code
