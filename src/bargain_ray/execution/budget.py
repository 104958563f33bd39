"""The budget: ``run.max_cost_usd`` as a hard cap on what a sweep folder pays, across invocations.

One actor, pinned to the driver's node, owns the figure. Every model call reserves its
worst case before it is sent and settles to its real cost after (``JournaledAgent`` does
both around the call), so the spend settled plus the reservations in flight never exceed
the cap, whatever the in-flight window. A call that cannot reserve waits while replies
in flight may free room, and is refused once they cannot: its game ends unknown
("budget"), and runs again on a later invocation with a higher cap.

Our choices where the issue is silent: the budget closes (every later call is refused) at its
first refusal, or as soon as what is left cannot pay the costliest model's longest reply
(``max_tokens`` at the output price), so the run winds down instead of trickling on. The
folder remembers it: each game the budget stopped is journaled with the cap in its reason,
and an invocation whose cap is no higher starts closed, so running again with the same cap
pays nothing more while a higher cap goes on from the spend read back from the call journal.

Reservations are held under the holder id of the game runner that made them (``clients.limiter.holder_id``). When
the pool notices a runner is lost it retires the holder (``retire``): its calls still waiting for room are refused
and take none, and so is every later one. The calls it held stay counted, at their worst case, as lost; ours where
the issue is silent, how each ends:

- one whose reply the journal holds (written before the runner died) ends at what the journal says it cost, once the
  pool has read it back for the replacement (``journaled``): the replacement replays it free;
- one sent through the batch API stays held until the replacement sends it again: that is the same request, waiting
  for the batch it is in (``execution.batcher``), so the replacement takes the hold over and settles it;
- one sent online stays counted at its worst case for the rest of the run: it may have reached the provider, which
  may bill it whether or not a reply came back, and the replacement's is a second request with its own reservation.
  The room it takes may not have been needed; the cap holds even if the provider billed every lost call in full.
  It is never waited for (it counts as spent, not as a reservation): nothing would ever settle it.

A runner reported lost that turns out to be alive (it had only stopped answering for a while) is killed by its pool;
a settle it sends before it dies ends its lost call at what it cost, and is the only thing it can still do here.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import ray
from pydantic import BaseModel
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from bargain_ray.config.pricing import price_of, worst_case_usd
from bargain_ray.core.errors import Failure, FailureKind
from bargain_ray.store import read_heads

if TYPE_CHECKING:  # the actor's process imports this module: the design (every game's config) is the driver's
    from bargain_ray.design import ResolvedSweep

# what each call reserves (``JournaledAgent`` imports it from here); the arithmetic lives in config.pricing
__all__ = ["Budget", "BudgetState", "idle_state", "margin_usd", "refusal", "start_budget", "stopped_at",
           "worst_case_usd"]


def margin_usd(sweep: ResolvedSweep) -> float:
    """What the costliest model's longest reply costs: below this much left, the budget closes."""
    return max((m.max_tokens * price_of(m)[1] for m in sweep.models.values() if m.is_llm), default=0.0)


class BudgetState(BaseModel):
    """The budget as the driver reads it for the summary."""

    cap_usd: float
    spent_before_usd: float
    spent_now_usd: float
    reserved_usd: float
    lost_usd: float = 0.0
    """The worst case of the online calls lost runners held, never settled: maybe billed (``Budget.retire``)."""
    closed: bool
    refused: int

    @property
    def left_usd(self) -> float:
        return max(0.0, self.cap_usd - self.spent_before_usd - self.spent_now_usd - self.lost_usd)


class Hold(NamedTuple):
    """What one call holds: its worst case, and whether it goes through the batch API (sent again, it is the same
    request: ``Budget.retire``)."""

    worst: float
    batched: bool


class Budget:
    """Reservations and settled spend of one invocation, over the spend of earlier ones."""

    def __init__(self, cap_usd: float, spent_before_usd: float, margin: float, closed: bool = False) -> None:
        self.cap = cap_usd
        self.before = spent_before_usd
        self.margin = margin
        self.now = 0.0
        self.refused = 0
        self._held: dict[tuple[str, str], Hold] = {}  # (holder, call_id) -> what it holds
        self._lost: dict[tuple[str, str], Hold] = {}  # the same, of retired holders
        self._retired: set[str] = set()
        self._changed = asyncio.Condition()
        self.closed = closed or self._left() < margin

    def _left(self) -> float:
        """The cap less what is spent, lost online calls counted as spent."""
        return self.cap - self.before - self.now - self._lost_online()

    def _lost_online(self) -> float:
        """The worst case of the online calls lost runners held: maybe billed, never settled."""
        return sum(h.worst for h in self._lost.values() if not h.batched)

    def _reserved(self) -> float:
        """What the calls in flight hold, lost batched ones included (their replacement takes them over)."""
        return sum(h.worst for h in self._held.values()) + sum(h.worst for h in self._lost.values() if h.batched)

    async def reserve(self, call_id: str, holder: str, worst: float, label: str, batched: bool = False) -> Failure | None:
        """Hold ``worst`` for ``call_id`` (a call of model ``label``, through the batch API if ``batched``) under
        ``holder``; wait while replies in flight may free room; None once held, else the refusal (the failure of its
        game)."""
        async with self._changed:
            while True:
                if holder in self._retired:
                    return REPLACED
                if self.closed or worst > self._left():
                    self.closed = True  # spend only grows: this call can never fit
                    self.refused += 1
                    self._changed.notify_all()
                    return refusal(self.cap, label, worst)
                if batched and (lost := self._take_over(call_id)) is not None:
                    self._held[holder, call_id] = Hold(max(worst, lost.worst), batched)
                    return None
                if worst <= self._left() - self._reserved():
                    self._held[holder, call_id] = Hold(worst, batched)
                    return None
                await self._changed.wait()

    def _take_over(self, call_id: str) -> Hold | None:
        """The hold of a lost runner's batched call ``call_id``, taken from it, if there is one."""
        lost = next((key for key, hold in self._lost.items() if key[1] == call_id and hold.batched), None)
        return self._lost.pop(lost) if lost is not None else None

    async def settle(self, call_id: str, holder: str, cost_usd: float) -> None:
        """The call ``holder`` reserved is over: its reservation becomes what it really cost (0 when nothing was paid);
        a lost one's too, when its retired holder settles it after all."""
        async with self._changed:
            held = self._lost if holder in self._retired else self._held
            if held.pop((holder, call_id), None) is not None:
                self.now += cost_usd
            self._notify_change()

    async def retire(self, holder: str) -> None:
        """A lost game runner: refuse its waiting and later reservations; what it holds is lost (see the module)."""
        async with self._changed:
            self._retired.add(holder)
            for key in [k for k in self._held if k[0] == holder]:
                self._lost[key] = self._held.pop(key)
            self._notify_change()

    async def journaled(self, costs: dict[str, float]) -> None:
        """The replies the journal holds of a lost runner's games, by call id, as the pool read them back for its
        replacement: a lost call among them was paid what it says, and is replayed free."""
        async with self._changed:
            for key in [k for k in self._lost if k[1] in costs]:
                del self._lost[key]
                self.now += costs[key[1]]
            self._notify_change()

    def _notify_change(self) -> None:
        """Close once what is left cannot pay the costliest reply; wake the waiting reservations."""
        self.closed = self.closed or self._left() < self.margin
        self._changed.notify_all()

    async def close(self) -> None:
        """Refuse every later call (the run is stopping)."""
        async with self._changed:
            self.closed = True
            self._changed.notify_all()

    def state(self) -> BudgetState:
        return BudgetState(
            cap_usd=self.cap, spent_before_usd=self.before, spent_now_usd=self.now, reserved_usd=self._reserved(),
            lost_usd=self._lost_online(), closed=self.closed, refused=self.refused,
        )


REPLACED = Failure(kind=FailureKind.OTHER, detail="this game runner was reported lost and replaced: its games are "
                                                 "played again on its replacement")
"""What a retired holder's reservation gets (``Budget.retire``)."""

WAITERS = 1 << 16
"""Concurrent calls the actor serves: every game in flight may be waiting for room at once."""


def _arguments(sweep: ResolvedSweep, path: Path, spent_before_usd: float) -> tuple[float, float, float, bool] | None:
    """``Budget``'s arguments for this invocation (cap, spent before, margin, closed), None when there is no cap."""
    cap = sweep.run.max_cost_usd
    if cap is None:
        return None
    stopped = stopped_at(path)
    return cap, spent_before_usd, margin_usd(sweep), stopped is not None and cap <= stopped


def idle_state(sweep: ResolvedSweep, path: Path, spent_before_usd: float) -> BudgetState | None:
    """The budget of an invocation that plays nothing (no actor is started): the cap over what the folder paid."""
    arguments = _arguments(sweep, path, spent_before_usd)
    return Budget(*arguments).state() if arguments is not None else None


def start_budget(sweep: ResolvedSweep, path: Path, spent_before_usd: float) -> Any:
    """The budget actor of this invocation, on this (the driver's) node; None when there is no cap.

    Never restarted (``max_restarts=0``): its reservations in flight live only in its memory, so a new one could
    not know what the calls already sent may still cost, and the cap could be crossed. When it dies, every later
    reservation fails and the run stops (``lost_budget``); the calls already sent settle nowhere, but each is
    journaled, so the next invocation's budget reads what they cost."""
    arguments = _arguments(sweep, path, spent_before_usd)
    if arguments is None:
        return None
    node = ray.get_runtime_context().get_node_id()
    remote = ray.remote(num_cpus=0, max_concurrency=WAITERS, max_restarts=0)(Budget).options(  # type: ignore[call-overload]  # Ray's overloads name no actor option
        scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=node, soft=False)
    )
    return remote.remote(*arguments)


def refusal(cap_usd: float, label: str, worst: float) -> Failure:
    """The failure of a call the budget refused, carrying the cap it was refused at."""
    return Failure(kind=FailureKind.BUDGET, cap_usd=cap_usd,
                   detail=f"budget: run.max_cost_usd={cap_usd!r} reached; a call of {label} could cost up to "
                          f"${worst:.4f} and the cap leaves less")


def stopped_at(path: Path) -> float | None:
    """The highest cap at which the budget stopped a game of the folder ``path`` that is still unfinished."""
    latest: dict[str, float | None] = {}
    for head in read_heads(path):
        failure = head.outcome.failure
        latest[head.unit.unit_id] = failure.cap_usd if failure is not None and not head.outcome.known else None
    return max((cap for cap in latest.values() if cap is not None), default=None)
