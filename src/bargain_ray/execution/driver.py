"""The driver loop: schedules units on the worker pool and journals results as they arrive; knows no game rules."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import ray
from tqdm import tqdm

from bargain_ray.config import SweepConfig
from bargain_ray.core.unit import Unit
from bargain_ray.execution.batcher import batching, start_batcher
from bargain_ray.execution.calljournal import start_journal
from bargain_ray.execution.cluster import ensure_ray
from bargain_ray.execution.pool import WorkerPool, batches
from bargain_ray.execution.progress import Tally
from bargain_ray.providers import key_env_vars
from bargain_ray.store import GameJournal, read_calls


def run_units(sweep: SweepConfig, units: Iterator[Unit], total: int, journal_file: GameJournal, path: Path,
              finished: set[str]) -> tuple[Tally, bool]:
    """Play ``units``, journaling each result as it arrives; returns (tally, interrupted).

    ``finished`` are the units already done, whose journaled calls are not read back.
    """
    ensure_ray()
    run = sweep.run
    llm = any(m.is_llm for m in sweep.models.values())
    size = run.batch_size or (1 if llm else 32)
    journaling = run.journal_calls is not False and (run.journal_calls or llm)
    journal = start_journal(path) if journaling else None
    recorded = read_calls(path, skip=finished) if journaling else {}
    batcher = start_batcher(sweep, path) if batching(sweep) else None
    pool = WorkerPool(sweep.model_dump(mode="json"), journal, key_env_vars(sweep), run.workers,
                      max(run.max_in_flight, 16))
    source = batches(units, size, recorded)
    tally = Tally()
    budget_hit = exhausted = interrupted = False
    bar = tqdm(total=total, unit="game", disable=not run.progress, dynamic_ncols=True)
    try:
        while True:
            while not exhausted and not budget_hit and pool.games_in_flight() + size <= max(run.max_in_flight, size):
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
                bar.update(len(records))
                bar.set_postfix(
                    agree=tally.statuses.get("AGREEMENT", 0),
                    fail=sum(v for k, v in tally.statuses.items() if k not in ("AGREEMENT", "NO_AGREEMENT")),
                    usd=f"{tally.cost_usd:.2f}",
                    refresh=False,
                )
            if run.max_cost_usd is not None and tally.cost_usd >= run.max_cost_usd and not budget_hit:
                budget_hit = True
                tqdm.write(f"budget reached (${tally.cost_usd:.2f} >= ${run.max_cost_usd:.2f}): "
                           "no new games start; games in flight finish")
    except KeyboardInterrupt:
        interrupted = True
    finally:
        bar.close()
        journal_file.close()
        pool.close(clean=not interrupted)
        if journal is not None:
            ray.get(journal.close.remote())
            ray.kill(journal)
        if batcher is not None:
            tally.batches = ray.get(batcher.batches_sent.remote())
            ray.get(batcher.close.remote())
            ray.kill(batcher)
    return tally, interrupted
