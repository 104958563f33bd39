"""Turn-level resume: every model reply is journaled durably the moment it returns.

A game interrupted at turn 7 is replayed from its journaled replies on resume
and pays only for the calls it had not made yet. The journal file lives in the
sweep folder and is written (by the store's ``CallJournal``) in one actor
pinned to the driver's node, so workers on other nodes never need a shared disk.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from bargain_ray.agents.base import Agent
from bargain_ray.core.hashing import digest
from bargain_ray.core.prompt import Prompt
from bargain_ray.core.records import Reply
from bargain_ray.store.calls import CallJournal, calls_journal_path


def prompt_key(prompt: Prompt) -> str:
    """What a replayed reply must have answered: the same prompt, word for word."""
    return digest(prompt.model_dump(mode="json"))


def start_journal(sweep_dir: Path) -> Any:
    """The journal actor, on this (the driver's) node."""
    node = ray.get_runtime_context().get_node_id()
    remote = ray.remote(num_cpus=0)(CallJournal).options(
        scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=node, soft=False)
    )
    return remote.remote(str(calls_journal_path(sweep_dir).resolve()))


class JournaledAgent:
    """Replays a journaled reply for a call already paid for; journals every new one."""

    def __init__(self, inner: Agent, unit_id: str, recorded: dict[str, dict[str, Any]], journal: Any,
                 resumed: set[str]) -> None:
        self.inner = inner
        self.unit_id = unit_id
        self.recorded = recorded
        self.journal = journal
        self.resumed = resumed

    async def act(self, prompt: Prompt, call_id: str) -> Reply:
        key = prompt_key(prompt)
        entry = self.recorded.get(call_id)
        if entry is not None and entry["prompt"] == key:
            self.resumed.add(call_id)
            return Reply.model_validate(entry["reply"])
        reply = await self.inner.act(prompt, call_id)
        await self.journal.append.remote(
            {"unit_id": self.unit_id, "call_id": call_id, "prompt": key, "reply": reply.model_dump(mode="json")}
        )
        return reply
