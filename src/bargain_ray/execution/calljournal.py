"""Turn-level resume: every model reply is journaled durably the moment it returns.

A game interrupted at turn 7 is replayed from its journaled replies on resume
and pays only for the calls it had not made yet. The journal file lives in the
sweep folder and is written (by the store's ``CallJournal``) in one actor
pinned to the driver's node (``journal_actor``), so workers on other nodes never need a shared disk.

The journal actor restarts when its process dies (its state is the file): a call whose append was in
flight reaches the new one again and is written once (the restarted journal indexes the lines already
there). If it cannot restart, the worker keeps what it could not journal, its game ends unknown
(``lost_journal``), and the driver stops the run and writes those entries itself.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

import ray

from bargain_ray.agents.base import Agent
from bargain_ray.config import ModelConfig
from bargain_ray.core.errors import Failure, FailureKind, TechnicalFailure
from bargain_ray.core.hashing import digest
from bargain_ray.core.prompt import Prompt
from bargain_ray.core.records import GameRecord, Reply
from bargain_ray.execution.budget import worst_case_usd
from bargain_ray.store.calls import CallEntry, Entry, SpendEntry, VoidEntry
from bargain_ray.store.jsonl import encode_line


def prompt_key(prompt: Prompt) -> str:
    """What a replayed reply must have answered: the same prompt, word for word."""
    return digest(prompt.model_dump(mode="json"))


GONE = {
    FailureKind.LOST_JOURNAL: "the call journal's actor was lost (its process died and could not be restarted)",
    FailureKind.LOST_BUDGET: "the budget's actor was lost (its process died; it is never restarted, since the "
                             "reservations of the calls in flight died with it)",
    FailureKind.LOST_BATCHER: "the batcher's actor was lost (its process died and could not be restarted)",
}


def lost(kind: FailureKind) -> TechnicalFailure:
    """The failure of a call that met a sweep actor gone for good: its game ends unknown and the run stops."""
    return TechnicalFailure(Failure(kind=kind, detail=GONE[kind]))


@dataclass
class Ledger:
    """What every agent of one game runner records and budgets its calls through: the sweep's call journal and
    budget (actor handles, None when not used), the name the runner's reservations are held under, whether the
    run has stopped after losing an actor, and the entries the journal could not take."""

    journal: Any = None
    budget: Any = None
    holder: str = ""
    halted: Failure | None = None
    """Set when the run stops after losing one of its actors: no call starts after that."""
    unjournaled: list[Entry] = field(default_factory=list)
    """Entries written while the journal was gone for good; the driver journals them itself."""
    _group: GroupAppend | None = field(default=None, init=False, repr=False)

    def check(self) -> None:
        if self.halted is not None:
            raise TechnicalFailure(self.halted)

    async def reserve(self, call_id: str, worst: float, label: str, batched: bool) -> None:
        """Hold ``worst`` for the call (sent through the batch API if ``batched``); raises its game's failure when
        refused, or when the budget is gone."""
        try:
            refused = await self.budget.reserve.remote(call_id, self.holder, worst, label, batched)
        except ray.exceptions.RayActorError:
            raise lost(FailureKind.LOST_BUDGET) from None
        if refused:
            raise TechnicalFailure(refused)

    async def settle(self, call_id: str, cost_usd: float) -> None:
        """The call's real cost; a budget gone meanwhile is left to the next reservation to report."""
        try:
            await self.budget.settle.remote(call_id, self.holder, cost_usd)
        except ray.exceptions.RayActorError:
            pass

    async def record(self, *entries: Entry) -> None:
        """Journal ``entries``: returns once they are on disk (written with whatever the runner's other games
        journaled meanwhile, ``GroupAppend``); kept here for the driver if the journal is gone for good."""
        if self._group is None:
            self._group = GroupAppend(self.journal)
        try:
            await self._group.append(entries)
        except ray.exceptions.RayActorError:
            self.unjournaled.extend(entries)
            raise lost(FailureKind.LOST_JOURNAL) from None


class GroupAppend:
    """Group commit of one runner's appends: one goes to the journal actor at once; those that come while it is
    in flight queue and go together as the next one (one actor call, one fsync), each caller answered once its
    own entries are on disk. No reply waits past its own write: a caller that waited on the one before would
    have waited on the actor anyway."""

    def __init__(self, journal: Any) -> None:
        self.journal = journal
        self._queue: list[tuple[tuple[Entry, ...], asyncio.Future[None]]] = []
        self._sender: asyncio.Task[None] | None = None

    async def append(self, entries: tuple[Entry, ...]) -> None:
        done = asyncio.get_running_loop().create_future()
        self._queue.append((entries, done))
        if self._sender is None:
            self._sender = asyncio.ensure_future(self._send())
        await done  # a caller cancelled meanwhile cancels its future only: its entries stay queued and are written

    async def _send(self) -> None:
        try:
            while self._queue:
                batch, self._queue = self._queue, []
                try:
                    await self.journal.append_lines.remote(*(encode_line(e) for entries, _ in batch for e in entries))
                except Exception as exc:  # noqa: BLE001 - each caller gets the write's failure as its own
                    _answer(batch, exc)
                except BaseException:
                    _answer(batch, None, cancel=True)
                    raise
                else:
                    _answer(batch, None)
        finally:
            self._sender = None


def _answer(batch: list[tuple[tuple[Entry, ...], asyncio.Future[None]]], exc: Exception | None,
            cancel: bool = False) -> None:
    for _, done in batch:
        if done.done():
            continue
        if cancel:
            done.cancel()
        elif exc is not None:
            done.set_exception(exc)
        else:
            done.set_result(None)


class JournaledAgent:
    """Where replay or pay is decided: a journaled reply is replayed for free; a new call reserves its worst
    case from the budget before it is sent, is journaled the moment it returns (its reply when ``replies``,
    else only its cost: every paid call has its line, which the budget of a later invocation reads), and
    then settles its cost. A call whose outcome is unknown (it raised anything but a provider's failure)
    settles at its worst case, so the cap never misses a call that may have been paid."""

    def __init__(self, inner: Agent, model: ModelConfig, unit_id: str, recorded: dict[str, CallEntry],
                 replies: bool, ledger: Ledger, resumed: set[str], batched: bool = False) -> None:
        self.inner = inner
        self.model = model
        self.batched = batched
        """Its calls go through the batch API (``ResolvedSweep.sends_batched``)."""
        self.unit_id = unit_id
        self.recorded = recorded
        self.replies = replies
        self.ledger = ledger
        self.budgeted = ledger.budget is not None and model.is_llm
        self.resumed = resumed

    async def act(self, prompt: Prompt, call_id: str) -> Reply:
        key = prompt_key(prompt)
        entry = self.recorded.get(call_id)
        if entry is not None and entry.prompt == key:
            self.resumed.add(call_id)
            return entry.reply
        self.ledger.check()
        if not self.budgeted:
            return await self._journaled(await self.inner.act(prompt, call_id), call_id, key)
        worst = worst_case_usd(self.model, prompt)
        await self.ledger.reserve(call_id, worst, f"{self.model.provider} {self.model.name}", self.batched)
        cost = 0.0
        try:
            self.ledger.check()  # the run may have stopped while the call waited for room
            cost = worst  # from here the call may be paid: until its reply says what it cost, its worst case
            try:
                reply = await self.inner.act(prompt, call_id)
            except TechnicalFailure:
                cost = 0.0  # the provider failed it after its retries: nothing is billed
                raise
            cost = reply.cost_usd
            return await self._journaled(reply, call_id, key)
        finally:
            await self.ledger.settle(call_id, cost)

    async def _journaled(self, reply: Reply, call_id: str, key: str) -> Reply:
        if self.ledger.journal is not None:
            await self.ledger.record(
                CallEntry(unit_id=self.unit_id, call_id=call_id, prompt=key, reply=reply) if self.replies
                else SpendEntry.of(self.unit_id, call_id, reply))
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


async def void_failed_calls(ledger: Ledger, record: GameRecord) -> None:
    """Journal that the calls whose failure made ``record`` unknown are asked again on resume (before the
    game's record reaches the driver, so a stop in between leaves them asked again too)."""
    if ledger.journal is not None and (calls := failed_calls(record)):
        why = f"{record.outcome.reason}: asked again on resume"
        try:
            await ledger.record(*(VoidEntry(unit_id=record.unit.unit_id, call_id=c, void=why) for c in calls))
        except TechnicalFailure:
            pass  # kept for the driver to journal; the game is unknown already
