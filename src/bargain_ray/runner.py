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


def run_units(sweep: SweepConfig, units: Iterator[Unit], total: int, store: SweepStore) -> tuple[Tally, bool]:
    """Play ``units``, journaling each result as it arrives; returns (tally, interrupted)."""
    ensure_ray()
    run = sweep.run
    llm = any(m.is_llm for m in sweep.models.values())
    size = run.batch_size or (1 if llm else 32)
    spec = sweep.model_dump(mode="json")
    journaling = run.journal_calls is not False and (run.journal_calls or llm)
    journal = start_journal(store.path) if journaling else None
    recorded = read_journal(store.path, skip=set(store.finished())) if journaling else {}
    options = {"max_concurrency": max(run.max_in_flight, 16)}
    keys = key_env_vars(sweep)
    workers = [RemoteGameRunner.options(**options).remote(spec, journal, keys) for _ in range(run.workers)]
    pending: dict[ray.ObjectRef, int] = {}
    source = batches(units, size, recorded)
    tally = Tally()
    budget_hit = False
    interrupted = False
    bar = tqdm(total=total, unit="game", disable=not run.progress, dynamic_ncols=True)
    try:
        turn = itertools.cycle(workers)
        exhausted = False
        while True:
            while not exhausted and not budget_hit and len(pending) * size < run.max_in_flight:
                batch = next(source, None)
                if batch is None:
                    exhausted = True
                    break
                pending[next(turn).play_batch.remote(batch)] = len(batch)
            if not pending:
                break
            done, _ = ray.wait(list(pending), num_returns=len(pending), timeout=0.2, fetch_local=True)
            for ref in done:
                pending.pop(ref)
                for record in ray.get(ref):
                    store.append(record)
                    tally.add(record)
                    bar.update(1)
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
        if not interrupted:
            ray.get([w.close.remote() for w in workers], timeout=30)
        for w in workers:
            ray.kill(w)
        if journal is not None:
            ray.get(journal.close.remote())
            ray.kill(journal)
    return tally, interrupted
