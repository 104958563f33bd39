"""The driver loop: schedules units on the worker pool and journals results as they arrive; knows no game rules.

Every actor of the sweep may die. The call journal, the batcher and the cluster's limiter are restarted by Ray
(their state is a file or relearned) and the run goes on; a game runner is replaced by the pool and its games
sent again. The budget is never restarted, and a journal or batcher that cannot restart is gone for good: the
games that meet the loss end unknown with its failure (``core.errors.LOST_ACTOR``), the run stops (no call
starts, the calls already sent come back and are journaled, for at most ``DRAIN_S``), tables are written, and
the exit code is 2 with the loss named on the last line.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ray
from tqdm import tqdm

from bargain_ray.clients.limiter import start_limiters
from bargain_ray.core.errors import LOST_ACTOR, FailureKind
from bargain_ray.core.records import GameRecord
from bargain_ray.core.unit import Unit
from bargain_ray.design import ResolvedSweep
from bargain_ray.execution.batcher import batching, start_batcher
from bargain_ray.execution.budget import idle_state, start_budget
from bargain_ray.execution.drift import DriftWatch
from bargain_ray.execution.journal_actor import start_journal
from bargain_ray.execution.live import LiveCalls
from bargain_ray.execution.pool import ASK_S, WorkerPool, runner_count, tasks
from bargain_ray.execution.progress import RunResult, SweepBar
from bargain_ray.execution.seat_actor import start_seats
from bargain_ray.execution.signals import Stop
from bargain_ray.execution.startup import StartupClock
from bargain_ray.execution.tally import Tally
from bargain_ray.execution.worker import Job, RemoteGameRunner
from bargain_ray.providers import key_env_vars
from bargain_ray.store import GameJournal, read_call_lines
from bargain_ray.store.calls import CallJournal, calls_journal_path, read_calls, replayable
from bargain_ray.store.paid import spend_of
from bargain_ray.store.seats import read_seats

DRAIN_S = 60.0
"""After the run lost one of its actors, how long it waits for the calls already sent to come back (and be
journaled) before it stops the games still in flight (ours: a long reply takes tens of seconds, and one cut
off is paid for nothing; a request waiting in an open batch is journaled there and collected on resume)."""


def answer(ref: ray.ObjectRef, default: Any = None) -> Any:
    """An actor's answer, or ``default`` when the actor is gone (or does not answer within ``ASK_S``)."""
    try:
        return ray.get(ref, timeout=ASK_S)
    except (ray.exceptions.RayActorError, ray.exceptions.GetTimeoutError):
        return default


def run_units(sweep: ResolvedSweep, units: Iterator[Unit], total: int, journal_file: GameJournal, path: Path,
              finished: set[str], stop: Stop, clock: StartupClock | None = None, runner: Any = RemoteGameRunner,
              spec: dict[str, Any] | None = None,  # free-form: the runners' spec as JSON, validated by each
              seated: bool = False) -> RunResult:
    """Play ``units``, journaling each result as it arrives, until they are done, the budget stops them, an actor
    of the sweep is lost for good, or SIGINT/SIGTERM asks to stop (then games in flight are stopped; their paid
    replies replay on resume).

    ``finished`` are the units already done, whose journaled calls are not read back. ``runner`` is the actor class
    that plays them, handed ``spec`` (default: ``GameRunner`` and the sweep as JSON; a judging run's reads:
    ``execution.reader``). ``seated``: units to play have human seats (``seats.json`` is written,
    ``execution.seat_actor.prepare_seats``): the seat page is served.
    """
    stop.install()  # again, in case a caller's ray.init replaced its SIGTERM handler
    run = sweep.run
    llm = any(m.is_llm for m in sweep.models.values())
    humans = any(m.is_human for m in sweep.models.values())
    size = run.games_per_task or (1 if llm or humans else 32)
    replies = run.journal_calls is not False  # run.journal_calls=false journals each paid call's cost only
    calls = list(read_call_lines(path))  # before Ray: the plan has read it whole already
    recorded = replayable(calls, skip=finished) if replies or humans else {}  # a person's replies are always kept
    drift = DriftWatch(path, run.on_drift)
    drift.seed(calls)
    journaled = llm or humans or bool(run.journal_calls)  # a call journal exists: every paid call, any reply to replay
    tailed = journaled and replies  # each answer is seen once: in the call journal, else in its game
    # what was paid before, and the tail of what is paid from here on: both before any actor can journal a call
    live = LiveCalls(path, {m.name for m in sweep.models.values()}, spend_of(calls), clock, drift if tailed else None)
    del calls
    spent_before = live.before.cost_usd
    playing = total > 0  # a folder with nothing left to play (run again once finished) starts no actor
    budget = start_budget(sweep, path, spent_before) if playing else None
    journal = start_journal(path) if playing and journaled else None
    batcher = start_batcher(sweep, path) if playing and batching(sweep) else None
    seats = start_seats(path, run.seats.turn_limit_s) if playing and seated else None
    if seats is not None and (file := read_seats(path)) is not None:
        tqdm.write(f"seat page: {file.url} (the lobby hands each person the next free seat; each seat's own link is "
                   "in seats.json)")
    runners = runner_count(run.workers, total, size, llm)
    pool = WorkerPool(sweep.model_dump(mode="json") if spec is None else spec, journal, key_env_vars(sweep), runners,
                      budget, refresh=lambda jobs: journaled_since(jobs, path, journal), runner=runner, seats=seats)
    if llm and playing:  # after the runners, so an idle worker process Ray has ready goes to a runner; beside them
        start_limiters()
    loop = Loop(pool, tasks(units, size, recorded), size, max(run.max_in_flight, size), journal_file,
                SweepBar(total, run.progress, live), stop, known=set(finished), drift=drift, drift_in_games=not tailed)
    try:
        loop.run()
    except KeyboardInterrupt:
        pass  # a second signal while stopping: stop now, the cleanup below still runs
    finally:
        loop.bar.close()
        if stop.requested:
            tqdm.write(f"{stop.name}: stopping; games in flight are stopped, their paid replies "
                       + ("replay on resume" if replies else "are paid again on resume (run.journal_calls=false)"))
            if budget is not None:
                budget.close.remote()  # no call starts while the workers go
        journal_file.close()
        orphans = pool.unjournaled() if pool.halted is not None else []  # the journal may be the actor lost
        pool.close(clean=not stop.requested)
        if seats is not None:
            answer(seats.close.remote())
            ray.kill(seats)
        close_journal(journal, path, orphans)
        if batcher is not None:
            loop.tally.batches = answer(batcher.batches_sent.remote(), 0)
            answer(batcher.close.remote())
            ray.kill(batcher)
        state = answer(budget.state.remote()) if budget is not None else idle_state(sweep, path, spent_before)
        if budget is not None:
            ray.kill(budget)
    return RunResult(tally=loop.tally, to_run=total, live=loop.bar.live, finished_units=loop.known,
                     signal=stop.name, signal_code=stop.exit_code if stop.requested else 0, budget=state,
                     replies_journaled=replies, drift=drift,
                     seats=board.board() if seated and (board := read_seats(path)) is not None else None)


@dataclass
class Loop:
    """Keeps the pool fed and journals each task's results the moment they return."""

    pool: WorkerPool
    source: Iterator[list[Job]]
    size: int
    window: int
    """Games in flight at most."""
    journal_file: GameJournal
    bar: SweepBar
    stop: Stop
    known: set[str]
    drift: DriftWatch | None = None
    drift_in_games: bool = False
    """The answers are compared for drift as their games come back (no call journal holds the replies)."""
    tally: Tally = field(default_factory=Tally)
    exhausted: bool = False
    drain_until: float | None = None

    def run(self) -> None:
        """Until every unit came back, a signal asked to stop, or the run has drained after losing an actor."""
        while not self.stop.requested:
            self._feed()
            if not self.pool.pending:
                return
            for records in self.pool.finished():
                self.journal_file.append_many(records)
                for record in records:
                    self.tally.add(record)
                    self._compare(record)
                    if record.outcome.known:
                        self.known.add(record.unit.unit_id)
                    elif record.outcome.failure is not None and record.outcome.failure.kind in LOST_ACTOR:
                        self.pool.halt(record.outcome.failure)
                self.bar.show(records, self.tally)
            self._stop_on_drift()
            if self._drained():
                return
            self.bar.tick(self.tally)
            self._stop_on_drift()

    def _compare(self, record: GameRecord) -> None:
        """A game's answers compared for drift, when no call journal holds them (``run.journal_calls=false``)."""
        if self.drift is not None and self.drift_in_games:
            for call in record.calls:
                if not call.resumed and call.status == "ok":
                    self.drift.see(call, call.call_id)

    def _stop_on_drift(self) -> None:
        """``run.on_drift=stop``: the first drift stops every call as a lost actor does (``_drained``)."""
        if self.drift is not None and (failure := self.drift.failure) is not None:
            self.pool.halt(failure)

    def _feed(self) -> None:
        while (not self.exhausted and self.pool.halted is None and not self.tally.budget_refused
               and self.pool.games_in_flight() + self.size <= self.window):
            jobs = next(self.source, None)
            if jobs is None:
                self.exhausted = True
                return
            self.pool.submit(jobs)

    def _drained(self) -> bool:
        """Once halted: say why (once), then give the calls in flight ``DRAIN_S`` to come back."""
        if self.pool.halted is None:
            return False
        if self.drain_until is None:
            then = ("see the last line for how to go on" if self.pool.halted.kind == FailureKind.DRIFT
                    else "run the same command again to resume")
            tqdm.write(f"stopping: {self.pool.halted.detail}; no call starts, the games in flight end unknown "
                       f"and their paid calls are journaled; {then}")
            self.drain_until = time.monotonic() + DRAIN_S
        return time.monotonic() > self.drain_until


def journaled_since(jobs: list[Job], path: Path, journal: Any) -> list[Job]:
    """``jobs`` of a lost runner with the replies journaled since they were first sent, so a game sent again
    replays them instead of paying again (only its calls in flight at the loss are paid twice). The journal
    answers a barrier first: the appends the lost runner had already sent are on disk by then."""
    if journal is None:
        return jobs
    answer(journal.barrier.remote())
    again = read_calls(path, skip=set(), only={job.unit.unit_id for job in jobs})
    return [Job(job.unit, again.get(job.unit.unit_id, job.recorded_calls)) for job in jobs]


def close_journal(journal: Any, path: Path, orphans: list[Any]) -> None:
    """Close the call journal actor; then write what the runners paid while it was gone for good (each entry once:
    an append the lost actor finished before dying is on disk already)."""
    if journal is not None:
        answer(journal.close.remote())
        ray.kill(journal)
    if orphans:
        fallback = CallJournal(str(calls_journal_path(path)), indexed=True)
        fallback.append(*orphans)
        fallback.close()
        tqdm.write(f"the driver journaled the {len(orphans)} calls paid while the call journal was gone")
