"""One sweep from a validated config: plan, resume, run, tables, summary.

The report is the command's (``bargain_ray.run_sweep``): the runner is handed what builds it and imports no analysis."""

from __future__ import annotations

import sys
from collections.abc import Callable
from contextlib import ExitStack, nullcontext
from pathlib import Path

from bargain_ray.config import SweepConfig, local_conf_note
from bargain_ray.core.status import ExitCode
from bargain_ray.design import ResolvedSweep, resolve
from bargain_ray.design.scenario import CellCheck, check_lines, check_sweep, no_zone_refusal
from bargain_ray.execution.cluster import ClusterUnavailable, RayChoice, choose_ray, start_ray, watch_cluster
from bargain_ray.execution.driver import run_units
from bargain_ray.execution.plan import dry_run, plan
from bargain_ray.execution.seat_actor import SeatsUnavailable, prepare_seats
from bargain_ray.execution.signals import stop_on_signals
from bargain_ray.execution.startup import StartupClock
from bargain_ray.execution.summary import summary
from bargain_ray.providers import LocalModelUnavailable, check_service, key_names, missing_keys, provider_service
from bargain_ray.providers.routing import SimProvider
from bargain_ray.store import (
    CorruptJournal,
    DiskFull,
    FolderLocked,
    GameJournal,
    hold_lock,
    is_disk_full,
    write_status,
)
from bargain_ray.store.sim_runs import record_sim_run


def sweep_dir(sweep: ResolvedSweep) -> Path:
    """``run.dir``, else ``outputs/<grid name>/`` for real providers and ``outputs/<grid name>-sim/`` (``-local/``)
    for a rehearsal, so a rehearsal and the real run of one grid never share a folder by default."""
    if sweep.run.dir:
        return Path(sweep.run.dir)
    suffix = "" if sweep.provider.name == "default" else f"-{sweep.provider.name}"
    return Path("outputs") / f"{sweep.grid.name}{suffix}"


def check_keys(sweep: ResolvedSweep) -> None:
    """Stop before Ray and the first call, naming the missing key and the offline way, or what the local model
    needs installed."""
    missing = missing_keys(sweep)
    if missing:
        raise SystemExit(
            f"error: {', '.join(missing)} is not set, and grid {sweep.grid.name!r} calls real providers. "
            f"Set it in the environment, or rehearse offline with "
            f"`python -m bargain_ray +grid={sweep.grid.name} provider=sim` "
            "(simulated provider) or `+grid=demo` (strategy agents)."
        )
    try:
        check_service(sweep)
    except LocalModelUnavailable as exc:
        raise SystemExit(f"error: {exc}") from None


Report = Callable[[Path], Path]
"""Builds a sweep folder's report from its tables and returns its path (``analysis.report.build_report``)."""


def run_sweep(sweep: ResolvedSweep | SweepConfig, started: float | None = None, report: Report | None = None) -> int:
    """Run (or resume) a sweep holding its folder's lock; returns a process exit code. ``started`` is when the
    command started (monotonic; default now), the origin of the summary's start-up line. ``report``, when
    given, builds the report after the tables (with ``run.report``, unless the run was stopped), before the
    summary.

    ``sweep`` is resolved first (``design.resolve``: a ``SweepConfig`` is checked as the command line checks it).

    A dry run writes nothing: it creates no folder (a dry run of a new folder takes no lock) and no manifest, so it
    binds nothing a later run must match; of an existing folder it holds the lock while it reads the journals.
    A full disk ends the run with no tables attempted; the journals keep every line already written.
    A Ray that does not answer ends it before anything is started (exit 69).
    """
    sweep = resolve(sweep)
    checks = check_sweep(sweep)
    if not sweep.run.allow_no_zone and (refused := no_zone_refusal(checks)):
        raise SystemExit(f"error: {refused}")
    if not sweep.run.dry_run:
        check_keys(sweep)
    path = sweep_dir(sweep)

    def locked() -> int:
        try:
            with nullcontext() if sweep.run.dry_run and not path.exists() else hold_lock(path):
                return _run_locked(sweep, path, StartupClock(started), report, checks)
        except (FolderLocked, CorruptJournal, LocalModelUnavailable, SeatsUnavailable) as exc:  # servers that did not come up
            raise SystemExit(f"error: {exc}") from None

    return guarded(path, locked)


def guarded(path: Path, run: Callable[[], int]) -> int:
    """``run()``'s exit code, or one line and the code of a Ray that does not answer (69) or of a full disk under
    ``path`` (74): a run's journals keep every line already written."""
    try:
        return run()
    except ClusterUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return ExitCode.CLUSTER_UNAVAILABLE
    except Exception as exc:
        if not is_disk_full(exc):
            raise
        print(f"error: {DiskFull(path)}", file=sys.stderr)
        return ExitCode.DISK_FULL


def ray_for(sweep: ResolvedSweep, plan_line: str, clock: StartupClock, meanwhile: Callable[[], object]) -> RayChoice:
    """Which Ray the run uses, said in the plan line, then joined or started (``meanwhile`` runs as it starts)."""
    choice = choose_ray(sweep.run.ray_timeout_s)
    print(f"{plan_line}; ray: {choice.describe()}", flush=True)
    clock.mark("plan")
    start_ray(choice, key_names(sweep), meanwhile)
    clock.mark("ray")
    return choice


def _run_locked(sweep: ResolvedSweep, path: Path, clock: StartupClock, report: Report | None,
                checks: list[CellCheck]) -> int:
    with stop_on_signals(running=False) as stop:  # until the games start, a signal ends the command at once
        planned = plan(sweep, path)
        todo, count, done = planned.todo, planned.count, planned.done
        finished = len(done)
        line = planned.line(sweep.grid.name)
        if sweep.run.dry_run:
            print(dry_run(sweep, path, planned))
            print(check_lines(checks))
            return 0
        seated = prepare_seats(sweep, path, todo()) is not None
        with ExitStack() as service:  # the simulated provider (or local model) starts while Ray does
            served: list[ResolvedSweep] = []
            choice = ray_for(sweep, line, clock, lambda: served.append(service.enter_context(provider_service(sweep))))
            with watch_cluster(choice, sweep.run.ray_timeout_s):
                write_status(path, "running", count + finished)
                if isinstance(sweep.provider, SimProvider):  # the rehearsal note states the noise each run played with
                    record_sim_run(path, sweep.provider.settings.reply_noise)
                stop.running = True  # from here SIGINT/SIGTERM stop like Ctrl-C: the tables are still written
                result = run_units(served[0], todo(), count, GameJournal(path), path, done, stop, clock, seated=seated)
                service.close()
                from bargain_ray.store import write_tables  # polars: loaded after the games, off the start-up's path

                counts = write_tables(path)
                write_status(path, "interrupted" if stop.requested else "ended", count + finished)
                if report is not None and sweep.run.report and not stop.requested:
                    print(f"report: {report(path)}")
        if note := local_conf_note(sweep.config.local_conf):
            print(note)  # the summary's first line: which ./conf files the games were played from
        print(summary(result, path, finished, counts, planned.dropped, sweep.grid.name))  # last: its last line says what is unknown and why
        return stop.exit_code if stop.requested else result.exit_code
