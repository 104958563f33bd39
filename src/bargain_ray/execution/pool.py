"""The GameRunner actors of one sweep and the actor tasks in flight on each (a task: a few units to play).

A runner lost mid-sweep is retired, replaced, and its tasks sent again to the new one. ``WorkerPool._retire`` is the
one place a runner's holder id is retired everywhere it holds something, as soon as the pool notices the loss: the
runner is killed should it still be alive, the cluster's limiter frees its slots and cancels its queued calls
(``clients.limiter``), and the budget refuses its waiting reservations and keeps its calls in flight counted until
each is settled (``execution.budget``). Every runner the pool ends is retired the same way."""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import ray
from tqdm import tqdm

from bargain_ray.clients._ray_private import actor_id
from bargain_ray.clients.limiter import retire_holder
from bargain_ray.core.errors import Failure, FailureKind
from bargain_ray.core.records import GameRecord
from bargain_ray.core.unit import Unit
from bargain_ray.execution.worker import Job, RemoteGameRunner
from bargain_ray.store.calls import CallEntry, Entry

MAX_LOSSES = 3
"""Times the same games may lose their runner before the run stops instead of replacing it once more (ours: a
game that kills its process every time would otherwise loop for as long as the driver runs)."""

ASK_S = 30.0
"""How long the driver waits on a runner's answer when stopping (a runner that does not answer is being lost)."""


WORKERS = 2
"""GameRunners at most when ``run.workers`` is unset (ours)."""

GAMES_PER_RUNNER = 64
"""With ``run.workers`` unset, a runner is started per this many games that call models (ours). Starting one costs
about the CPU of 400 calls on the simulated provider (its process, module and SDK imports: ~3 s on 2 cores, at
~7 ms a call, ``bench/throughput.py``), and one runner keeps many games in flight: the 16-game rehearsal took
16-17 s of the machine's CPU with one runner and 17-22 s with two, and no less wall time."""


STRATEGY_GAMES_PER_RUNNER = 512
"""The same for sweeps of strategy agents only (ours). Starting a runner costs about a second of CPU (its process and
module; no SDK), and a strategy game a few milliseconds: 200 demo games took the same wall time (8.0-9.6 s, a local
instance, alternated) with one runner as with two."""


def runner_count(workers: int | None, total: int, size: int, llm: bool) -> int:
    """How many GameRunners a sweep of ``total`` games in tasks of ``size`` starts: never one no task would reach
    (none when there is nothing to play); ``workers`` (``run.workers``) at most, else one per ``GAMES_PER_RUNNER``
    games with models (``STRATEGY_GAMES_PER_RUNNER`` without), at most ``WORKERS``."""
    per = GAMES_PER_RUNNER if llm else STRATEGY_GAMES_PER_RUNNER
    wanted = workers if workers is not None else min(WORKERS, -(-total // per))
    return max(1, min(wanted, -(-total // size))) if total else 0


CONCURRENCY = 1 << 16
"""Actor tasks a runner serves at once: every game the driver has in flight (``run.max_in_flight`` at most) and the
driver's asks (halt, close, bind) beside them; one figure for every sweep, so a kept runner fits any."""

KEPT = WORKERS
"""Runners a driver process keeps from its ended sweeps for its next one (ours: as many as a sweep starts by
default; a kept runner holds its process's memory, ~200 MB, until the process ends)."""

_kept: dict[tuple[str, int], list[Any]] = {}
"""(Ray job, runner class) -> runners of this driver's ended sweeps, closed (no connection, key or journal) and
given to its next sweep (``GameRunner.bind``) instead of new ones: a process that runs several sweeps (a notebook,
the test session) pays a runner's start (its process, modules and SDK imports: ~3 s of CPU) once. A runner dies with
its driver, as before: the kept ones are this process's own actors."""


def kept(runner: Any = RemoteGameRunner) -> list[Any]:
    """The runners (of the actor class ``runner``) this driver process kept from its ended sweeps, for its next one."""
    return _kept.setdefault((ray.get_runtime_context().get_job_id(), id(runner)), [])


def close_kept() -> None:
    """End the runners this process kept from its ended sweeps (each holds ~200 MB until then)."""
    for runners in _kept.values():
        for runner in runners:
            ray.kill(runner)
    _kept.clear()


Task = tuple[int, Any, list[Job]]
"""An actor task in flight: the index of its runner in the pool, the runner, its games."""


def tasks(units: Iterator[Unit], size: int, recorded: dict[str, list[CallEntry]]) -> Iterator[list[Job]]:
    """Units in groups of ``size``, one group an actor task, each unit with the replies it already paid for."""
    while chunk := list(itertools.islice(units, size)):
        yield [Job(u, recorded.get(u.unit_id, [])) for u in chunk]


class WorkerPool:
    """GameRunner actors and the tasks in flight on each; a task lost with its actor is sent again, with the
    replies its games journaled since it was first sent (``refresh``), so only calls in flight are paid twice."""

    def __init__(self, spec: dict[str, Any], journal: Any, keys: dict[str, str], count: int,  # the ResolvedSweep's JSON dump as sent to each actor, validated there (worker.py)
                 budget: Any = None, refresh: Callable[[list[Job]], list[Job]] | None = None,
                 runner: Any = RemoteGameRunner, seats: Any = None) -> None:
        self._args = (spec, journal, keys, budget, seats)  # seats: the seat server's actor (a sweep with human seats)
        self.runner = runner
        """The actor class: ``RemoteGameRunner``, or a subclass's (a judging run's ``RemoteReadRunner``)."""
        self.budget = budget
        self.refresh = refresh or (lambda jobs: jobs)
        self._asked: dict[Any, ray.ObjectRef] = {}
        """Runner -> its answer to ``holder``, asked as it started, where Ray's handle does not give its id."""
        self.workers = [self._start() for _ in range(count)]
        self.pending: dict[ray.ObjectRef, Task] = {}
        self._turn = itertools.count()
        self.losses: Counter[tuple[str, ...]] = Counter()
        self.halted: Failure | None = None
        """Set once the run stops after losing an actor: lost tasks are not sent again."""

    def _start(self) -> Any:
        """A runner for this sweep (``_kept_or_new``), asked its holder id at once if its handle does not give it (an
        answer the driver holds, read should the runner be retired: ``_holder``)."""
        runner = self._kept_or_new()
        if actor_id(runner) is None:
            self._asked[runner] = runner.holder.remote()
        return runner

    def _kept_or_new(self) -> Any:
        """A runner kept from this driver's last sweep, bound to this one; else a new one."""
        kept_now = kept(self.runner)
        while kept_now:
            runner = kept_now.pop()
            try:
                ray.get(runner.bind.remote(*self._args), timeout=ASK_S)
                return runner
            except (ray.exceptions.RayActorError, ray.exceptions.GetTimeoutError):
                ray.kill(runner)  # lost while kept: a new one instead
        return self.runner.options(max_concurrency=CONCURRENCY, scheduling_strategy="SPREAD").remote(*self._args)

    def submit(self, jobs: list[Job], index: int | None = None) -> None:
        index = next(self._turn) % len(self.workers) if index is None else index
        runner = self.workers[index]
        self.pending[runner.play_many.remote(jobs)] = (index, runner, jobs)

    def games_in_flight(self) -> int:
        return sum(len(jobs) for _, _, jobs in self.pending.values())

    def finished(self, timeout: float = 0.5) -> Iterator[list[GameRecord]]:
        """Each task's records as it finishes: wait for one, then take every other one already done; the tasks lost
        with their runner among them are sent again together (``_replace_lost``)."""
        done, rest = ray.wait(list(self.pending), num_returns=1, timeout=timeout)
        if rest and done:
            done += ray.wait(rest, num_returns=len(rest), timeout=0)[0]
        lost: list[Task] = []
        for ref in done:
            task = self.pending.pop(ref)
            try:
                yield ray.get(ref)
            except ray.exceptions.RayActorError:
                lost.append(task)
        if lost:
            self._replace_lost(lost)

    def _replace_lost(self, lost: list[Task]) -> None:
        """Runners died with the tasks ``lost`` in flight: retire and replace each (once) and send the tasks again with
        the replies journaled since (read once for all), unless the run is stopping or their games lost their runner
        ``MAX_LOSSES`` times (then the run stops)."""
        for index, runner, _ in lost:
            if self.workers[index] == runner:  # the first report of its loss replaces it
                self._retire(runner)
                self.workers[index] = self._start()
                if self.halted is not None:
                    self.workers[index].halt.remote(self.halted)
        again = [(index, jobs) for index, _, jobs in lost if self._again(jobs)]
        if not again:
            return
        in_flight: Counter[int] = Counter()
        for index, jobs in again:
            in_flight[index] += len(jobs)
        for count in in_flight.values():
            tqdm.write(f"a worker was lost with {count} games in flight; they run again on a new one")
        refreshed = iter(self.refresh([job for _, jobs in again for job in jobs]))
        resent = [(index, [next(refreshed) for _ in jobs]) for index, jobs in again]
        if self.budget is not None:  # what their lost calls cost, of those the journal holds
            self._ask([self.budget.journaled.remote(
                {e.call_id: e.reply.cost_usd for _, jobs in resent for job in jobs for e in job.recorded_calls})])
        for index, jobs in resent:
            self.submit(jobs, index)

    def _again(self, jobs: list[Job]) -> bool:
        """Whether lost ``jobs`` are sent again: not while the run is stopping, nor once their games lost their runner
        ``MAX_LOSSES`` times (the run stops then)."""
        games = tuple(job.unit.unit_id for job in jobs)
        self.losses[games] += 1
        if self.halted is None and self.losses[games] >= MAX_LOSSES:
            detail = (f"a game runner was lost {MAX_LOSSES} times while playing {', '.join(games)} (a game that ends "
                      "its runner's process each time would otherwise be sent again forever)")
            self.halt(Failure(kind=FailureKind.LOST_WORKER, detail=detail))
        return self.halted is None

    def _retire(self, runner: Any) -> None:
        """End ``runner`` and free what it held: killed (a runner reported lost may only have been unreachable for a
        while: its games are played again elsewhere), its holder retired at the limiter (its slots freed, its queued
        calls cancelled) and at the budget (its waiting reservations refused, its calls in flight counted as lost,
        ``Budget.retire``), so its replacement has the room at once."""
        ray.kill(runner)
        holder = self._holder(runner)
        if holder is None:  # lost as it started, before it answered: what it held goes at its lease, as unretired
            return
        retire_holder(holder)
        if self.budget is not None:
            self._ask([self.budget.retire.remote(holder)])

    def _holder(self, runner: Any) -> str | None:
        """``runner``'s holder id: read off its handle (``clients._ray_private.actor_id``), else its answer to
        ``holder``, asked as it started (answered at once: it awaits nothing); None if it never answered."""
        asked = self._asked.pop(runner, None)
        if asked is None:
            return actor_id(runner)
        try:
            return str(ray.get(asked, timeout=ASK_S))
        except (ray.exceptions.RayActorError, ray.exceptions.GetTimeoutError):
            return None

    def halt(self, failure: Failure) -> None:
        """No call starts on any runner from now on; the games in flight end unknown with ``failure``."""
        if self.halted is None:
            self.halted = failure
            self._ask([w.halt.remote(failure) for w in self.workers])

    def unjournaled(self) -> list[Entry]:
        """What the runners paid (or voided) while the call journal was gone for good."""
        return [entry for entries in self._ask([w.unjournaled.remote() for w in self.workers]).values()
                for entry in entries]

    @staticmethod
    def _ask(refs: list[ray.ObjectRef]) -> dict[ray.ObjectRef, Any]:
        """The answers of the runners that answer within ``ASK_S`` (a lost one's never comes), by question."""
        done, _ = ray.wait(refs, num_returns=len(refs), timeout=ASK_S)
        answers = {}
        for ref in done:
            try:
                answers[ref] = ray.get(ref)
            except ray.exceptions.RayActorError:
                pass
        return answers

    def close(self, clean: bool) -> None:
        """Close the runners' connections; after a clean end keep up to ``KEPT`` for this driver's next sweep and end
        the rest; after a stop or a lost actor end them all (their games in flight stop with them). A runner ended is
        retired: a driver that lives on (a notebook) finds none of its slots held by it."""
        asked = [w.close.remote() for w in self.workers] if clean else []
        answered = self._ask(asked)
        kept_now = kept(self.runner)
        for index, runner in enumerate(self.workers):
            if self.halted is None and clean and asked[index] in answered and len(kept_now) < KEPT:
                kept_now.append(runner)
            else:
                self._retire(runner)
