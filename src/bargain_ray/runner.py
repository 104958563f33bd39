"""Schedules units on Ray workers and streams results to the store; knows no game rules."""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import ray
from tqdm import tqdm

from bargain_ray.calljournal import read_journal, start_journal
from bargain_ray.clients import key_env_vars
from bargain_ray.config import SweepConfig
from bargain_ray.design import Unit
from bargain_ray.store import SweepStore
from bargain_ray.worker import RemoteGameRunner


@dataclass
class Tally:
    """Running totals for the progress bar and the end summary."""

    games: int = 0
    statuses: dict[str, int] = field(default_factory=dict)
    cost_usd: float = 0.0
    per_model: dict[str, dict[str, float]] = field(default_factory=dict)

    def add(self, record: dict[str, Any]) -> None:
        self.games += 1
        status = record["outcome"]["status"]
        self.statuses[status] = self.statuses.get(status, 0) + 1
        for call in record["calls"]:
            m = self.per_model.setdefault(
                f"{call['provider']}:{call['model']}",
                {"calls": 0, "input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0},
            )
            m["calls"] += 1
            m["input_tokens"] += call["usage"]["input_tokens"]
            m["output_tokens"] += call["usage"]["output_tokens"]
            m["cost_usd"] += call["cost_usd"]
            self.cost_usd += call["cost_usd"]


def ensure_ray() -> None:
    """Join ``RAY_ADDRESS`` if set, else start (or reuse) a local instance."""
    if not ray.is_initialized():
        ray.init(address=os.environ.get("RAY_ADDRESS"), log_to_driver=False, include_dashboard=False)


def batches(units: Iterator[Unit], size: int, recorded: dict[str, list[dict[str, Any]]]) -> Iterator[list[dict[str, Any]]]:
    """Units as actor arguments, each with the replies it already paid for."""
    while chunk := list(itertools.islice(units, size)):
        yield [u.model_dump(mode="json") | {"recorded_calls": recorded.get(u.unit_id, [])} for u in chunk]


class WorkerPool:
    """GameRunner actors and the batches in flight on each; a batch lost with its actor is sent again."""

    def __init__(self, spec: dict[str, Any], journal: Any, keys: dict[str, str], count: int, concurrency: int) -> None:
        self._args = (spec, journal, keys)
        self._options = {"max_concurrency": concurrency, "scheduling_strategy": "SPREAD"}
        self.workers = [self._start() for _ in range(count)]
        self.pending: dict[ray.ObjectRef, tuple[int, list[dict[str, Any]]]] = {}
        self._turn = itertools.count()

    def _start(self) -> Any:
        return RemoteGameRunner.options(**self._options).remote(*self._args)

    def submit(self, batch: list[dict[str, Any]], index: int | None = None) -> None:
        index = next(self._turn) % len(self.workers) if index is None else index
        self.pending[self.workers[index].play_batch.remote(batch)] = (index, batch)

    def games_in_flight(self) -> int:
        return sum(len(batch) for _, batch in self.pending.values())

    def finished(self, timeout: float = 0.5) -> Iterator[list[dict[str, Any]]]:
        """Record batches as they finish: wait for one, then take every other one already done."""
        done, rest = ray.wait(list(self.pending), num_returns=1, timeout=timeout)
        if rest and done:
            done += ray.wait(rest, num_returns=len(rest), timeout=0)[0]
        for ref in done:
            index, batch = self.pending.pop(ref)
            try:
                yield ray.get(ref)
            except ray.exceptions.RayActorError:
                tqdm.write(f"a worker was lost with {len(batch)} games in flight; they run again on a new one")
                self.workers[index] = self._start()
                self.submit(batch, index)

    def close(self, clean: bool) -> None:
        if clean:
            try:
                ray.get([w.close.remote() for w in self.workers], timeout=30)
            except (ray.exceptions.RayActorError, ray.exceptions.GetTimeoutError):
                pass  # connections of a lost worker went with it
        for w in self.workers:
            ray.kill(w)


def run_units(sweep: SweepConfig, units: Iterator[Unit], total: int, store: SweepStore,
              finished: set[str]) -> tuple[Tally, bool]:
    """Play ``units``, journaling each result as it arrives; returns (tally, interrupted).

    ``finished`` are the units already done, whose journaled calls are not read back.
    """
    ensure_ray()
    run = sweep.run
    llm = any(m.is_llm for m in sweep.models.values())
    size = run.batch_size or (1 if llm else 32)
    journaling = run.journal_calls is not False and (run.journal_calls or llm)
    journal = start_journal(store.path) if journaling else None
    recorded = read_journal(store.path, skip=finished) if journaling else {}
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
                store.append_many(records)
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
        store.close()
        pool.close(clean=not interrupted)
        if journal is not None:
            ray.get(journal.close.remote())
            ray.kill(journal)
    return tally, interrupted
