"""The GameRunner actors of one sweep and the batches in flight on each."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import ray
from tqdm import tqdm

from bargain_ray.core.records import GameRecord
from bargain_ray.core.unit import Unit
from bargain_ray.execution.worker import Job, RemoteGameRunner
from bargain_ray.store.calls import CallEntry


def batches(units: Iterator[Unit], size: int, recorded: dict[str, list[CallEntry]]) -> Iterator[list[Job]]:
    """Units as actor arguments, each with the replies it already paid for."""
    while chunk := list(itertools.islice(units, size)):
        yield [Job(u, recorded.get(u.unit_id, [])) for u in chunk]


class WorkerPool:
    """GameRunner actors and the batches in flight on each; a batch lost with its actor is sent again."""

    def __init__(self, spec: dict[str, Any], journal: Any, keys: dict[str, str], count: int, concurrency: int,
                 budget: Any = None) -> None:
        self._args = (spec, journal, keys, budget)
        self.budget = budget
        self._options = {"max_concurrency": concurrency, "scheduling_strategy": "SPREAD"}
        self._names = itertools.count()
        self.holders = [f"worker-{next(self._names)}" for _ in range(count)]
        self.workers = [self._start(h) for h in self.holders]
        self.pending: dict[ray.ObjectRef, tuple[int, str, list[Job]]] = {}
        self._turn = itertools.count()

    def _start(self, holder: str) -> Any:
        return RemoteGameRunner.options(**self._options).remote(*self._args, holder)

    def submit(self, batch: list[Job], index: int | None = None) -> None:
        index = next(self._turn) % len(self.workers) if index is None else index
        self.pending[self.workers[index].play_batch.remote(batch)] = (index, self.holders[index], batch)

    def games_in_flight(self) -> int:
        return sum(len(batch) for _, _, batch in self.pending.values())

    def finished(self, timeout: float = 0.5) -> Iterator[list[GameRecord]]:
        """Record batches as they finish: wait for one, then take every other one already done."""
        done, rest = ray.wait(list(self.pending), num_returns=1, timeout=timeout)
        if rest and done:
            done += ray.wait(rest, num_returns=len(rest), timeout=0)[0]
        for ref in done:
            index, holder, batch = self.pending.pop(ref)
            try:
                yield ray.get(ref)
            except ray.exceptions.RayActorError:
                tqdm.write(f"a worker was lost with {len(batch)} games in flight; they run again on a new one")
                if self.holders[index] == holder:  # the first of its batches to report the loss replaces it
                    if self.budget is not None:  # its calls in flight went with it: their reservations come back
                        self.budget.release.remote(holder)
                    self.holders[index] = f"worker-{next(self._names)}"
                    self.workers[index] = self._start(self.holders[index])
                self.submit(batch, index)

    def close(self, clean: bool) -> None:
        if clean:
            try:
                ray.get([w.close.remote() for w in self.workers], timeout=30)
            except (ray.exceptions.RayActorError, ray.exceptions.GetTimeoutError):
                pass  # connections of a lost worker went with it
        for w in self.workers:
            ray.kill(w)
