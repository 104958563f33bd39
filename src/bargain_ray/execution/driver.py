"""The driver loop: schedules units on the worker pool and journals results as they arrive; knows no game rules."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import ray
from tqdm import tqdm

from bargain_ray.config import SweepConfig
from bargain_ray.core.unit import Unit
from bargain_ray.execution.batcher import batching, start_batcher
from bargain_ray.execution.budget import start_budget
from bargain_ray.execution.calljournal import start_journal
from bargain_ray.execution.cluster import ensure_ray
from bargain_ray.execution.pool import WorkerPool, batches
from bargain_ray.execution.progress import LimiterWatch, RunResult, SweepBar, Tally
from bargain_ray.execution.signals import Stop
from bargain_ray.providers import key_env_vars, key_names
from bargain_ray.store import GameJournal, paid_calls, read_call_lines
from bargain_ray.store.calls import replayable, spent


def run_units(sweep: SweepConfig, units: Iterator[Unit], total: int, journal_file: GameJournal, path: Path,
              finished: set[str], stop: Stop) -> RunResult:
    """Play ``units``, journaling each result as it arrives, until they are done, the budget stops them,
    or SIGINT/SIGTERM asks to stop (then games in flight are stopped; their paid replies replay on resume).

    ``finished`` are the units already done, whose journaled calls are not read back.
    """
    run = sweep.run
    llm = any(m.is_llm for m in sweep.models.values())
    size = run.batch_size or (1 if llm else 32)
    replies = run.journal_calls is not False  # run.journal_calls=false journals each paid call's cost only
    calls = list(read_call_lines(path))  # before Ray: the plan has read it whole already
    paid_before = spent(calls)
    recorded = replayable(calls, skip=finished) if replies else {}
    del calls
    ensure_ray(key_names(sweep))
    stop.install()  # again: ray.init puts its own SIGTERM handler in place
    budget = start_budget(sweep, path, sum(cost for _, cost in paid_before))
    journal = start_journal(path) if llm or run.journal_calls else None
    batcher = start_batcher(sweep, path) if batching(sweep) else None
    pool = WorkerPool(sweep.model_dump(mode="json"), journal, key_env_vars(sweep), run.workers,
                      max(run.max_in_flight, 16), budget)
    source = batches(units, size, recorded)
    tally = Tally()
    known = set(finished)
    exhausted = False
    bar = SweepBar(total, run.progress)
    watch = LimiterWatch(path, {m.name for m in sweep.models.values()})
    try:
        while not stop.requested:
            while (not exhausted and not tally.budget_refused
                   and pool.games_in_flight() + size <= max(run.max_in_flight, size)):
                batch = next(source, None)
                if batch is None:
                    exhausted = True
                    break
                pool.submit(batch)
            if not pool.pending:
                break
            for records in pool.finished():
                journal_file.append_many(records)
                for record in records:
                    tally.add(record)
                    if record.outcome.known:
                        known.add(record.unit.unit_id)
                bar.show(records, tally)
            watch.tick()
    except KeyboardInterrupt:
        pass  # a second signal while stopping: stop now, the cleanup below still runs
    finally:
        bar.close()
        if stop.requested:
            tqdm.write(f"{stop.name}: stopping; games in flight are stopped, their paid replies "
                       + ("replay on resume" if replies else "are paid again on resume (run.journal_calls=false)"))
            if budget is not None:
                budget.close.remote()  # no call starts while the workers go
        journal_file.close()
        pool.close(clean=not stop.requested)
        if journal is not None:
            ray.get(journal.close.remote())
            ray.kill(journal)
        if batcher is not None:
            tally.batches = ray.get(batcher.batches_sent.remote())
            ray.get(batcher.close.remote())
            ray.kill(batcher)
        state = ray.get(budget.state.remote()) if budget is not None else None
        if budget is not None:
            ray.kill(budget)
    paid_now = paid_calls(path)[len(paid_before):] if journal is not None else tally.paid
    return RunResult(tally=tally, to_run=total, paid_before=paid_before, paid_now=paid_now, finished_units=known,
                     signal=stop.name, signal_code=stop.exit_code if stop.requested else 0, budget=state,
                     replies_journaled=replies)
