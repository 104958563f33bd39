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
from bargain_ray.config import ModelConfig
from bargain_ray.core.errors import TechnicalFailure
from bargain_ray.core.hashing import digest
from bargain_ray.core.prompt import Prompt
from bargain_ray.core.records import GameRecord, Reply
from bargain_ray.execution.budget import worst_case_usd
from bargain_ray.store.calls import CallEntry, CallJournal, SpendEntry, calls_journal_path


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
    """Where replay or pay is decided: a journaled reply is replayed for free; a new call reserves its worst
    case from the budget before it is sent, is journaled the moment it returns (its reply when ``replies``,
    else only its cost: every paid call has its line, which the budget of a later invocation reads), and
    then settles its cost."""

    def __init__(self, inner: Agent, model: ModelConfig, unit_id: str, recorded: dict[str, CallEntry],
                 journal: Any, replies: bool, budget: Any, holder: str, resumed: set[str]) -> None:
        self.inner = inner
        self.model = model
        self.unit_id = unit_id
        self.recorded = recorded
        self.journal = journal
        self.replies = replies
        self.budget = budget
        self.holder = holder
        self.resumed = resumed

    async def act(self, prompt: Prompt, call_id: str) -> Reply:
        key = prompt_key(prompt)
        entry = self.recorded.get(call_id)
        if entry is not None and entry.prompt == key:
            self.resumed.add(call_id)
            return entry.reply
        if self.budget is None:
            return await self._pay(prompt, call_id, key)
        worst = worst_case_usd(self.model, prompt)
        refused = await self.budget.reserve.remote(call_id, self.holder, worst,
                                                   f"{self.model.provider} {self.model.name}")
        if refused:
            raise TechnicalFailure(refused)
        cost = 0.0
        try:
            reply = await self._pay(prompt, call_id, key)
            cost = reply.cost_usd
            return reply
        finally:  # a failed or cancelled call paid nothing we know of; its reservation comes back
            await self.budget.settle.remote(call_id, cost)

    async def _pay(self, prompt: Prompt, call_id: str, key: str) -> Reply:
        reply = await self.inner.act(prompt, call_id)
        if self.journal is not None:
            await self.journal.append.remote(
                CallEntry(unit_id=self.unit_id, call_id=call_id, prompt=key, reply=reply) if self.replies
                else SpendEntry(unit_id=self.unit_id, call_id=call_id, cost_usd=reply.cost_usd))
        return reply


def failed_calls(record: GameRecord) -> list[str]:
    """The calls whose failure made this game unknown: those of its last turn when that turn used up its
    repairs and the game ended unknown (an observer that could not be read: ``exhausted`` ends every game,
    so such a turn is the last one, and only a role that is an instrument ends it unknown; a party's
    exhausted repairs are a format failure, a known result that is never resumed).

    These are not replayed on resume (the role is asked again); every other journaled reply is: the
    parties' replies were valid moves and are paid for. A game stopped by an API failure or interrupted
    has no such turn, and all its replies replay.
    """
    last = record.turns[-1] if record.turns else None
    if record.outcome.known or last is None or last.valid:
        return []
    return list(last.call_ids)


async def void_failed_calls(journal: Any, record: GameRecord) -> None:
    """Journal that the calls whose failure made ``record`` unknown are asked again on resume (before the
    game's record reaches the driver, so a stop in between leaves them asked again too)."""
    if journal is not None and (calls := failed_calls(record)):
        unit_id = record.unit.unit_id
        await journal.void.remote(unit_id, calls, f"{record.outcome.reason}: asked again on resume")
