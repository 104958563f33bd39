"""The call journal's actor: the store's ``CallJournal`` in one process pinned to the driver's node.

Its own module, importing only Ray and the store's call journal: Ray's worker process imports the module of an
actor's class, and this one's writes bytes the runners already encoded (about 0.25 s of CPU less at each start
and restart than the module of the runners' side, ``calljournal``, which loads the agents, configs and budget).
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from bargain_ray.clients.limiter import NAMESPACE
from bargain_ray.store.calls import CallJournal, calls_journal_path

RESTARTS = 3
"""Times Ray restarts a sweep actor whose process died (the call journal, the batcher) before it is gone for good
and the run stops (ours: a process that keeps dying must not keep the run waiting on it forever)."""


def journal_name() -> str:
    """A name for this run's call journal (so an operator, or a test, can find it): its job's, and its own."""
    return f"bargain_ray_journal_{ray.get_runtime_context().get_job_id()}_{uuid.uuid4().hex[:8]}"


class JournalActor(CallJournal):
    """The call journal as a Ray actor: a restarted one (its process died) indexes what is on disk first."""

    def __init__(self, file: str) -> None:
        super().__init__(file, indexed=ray.get_runtime_context().was_current_actor_reconstructed)

    def barrier(self) -> None:
        """Answered once every append that reached the actor before it is written: its calls run one at a time,
        in the order they arrive (a barrier for the driver, ``driver.journaled_since``)."""


def start_journal(sweep_dir: Path) -> Any:
    """The journal actor, on this (the driver's) node; restarted there when its process dies (``RESTARTS`` times),
    and every call in flight to it retried on the new one."""
    node = ray.get_runtime_context().get_node_id()
    remote = ray.remote(num_cpus=0, max_restarts=RESTARTS, max_task_retries=-1)(JournalActor).options(
        name=journal_name(), namespace=NAMESPACE,
        scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=node, soft=False),
    )
    return remote.remote(str(calls_journal_path(sweep_dir).resolve()))
