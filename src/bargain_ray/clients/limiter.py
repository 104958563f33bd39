"""Rate limits shared by every worker on every node: one limiter per (provider, key, model).

All limiters live in one named, detached Ray async actor (one process for the
cluster, found by every worker with ``get_if_exists``); each key gets its own
state there. A process asks for its waiting calls of a key together (``Limiter``: one ``grant`` out at
a time, answered once any goes) and reports what the provider said of each ended call in fire-and-forget
batches, so an actor call serves many model calls. Without Ray the same state runs in-process.

Per key, one dispatcher hands calls out in arrival order (so no caller starves), each once

- a slot is free. Calls in flight are capped by a window: until the key's limits are known
  (configured, or announced in a response's headers) it starts at 1 and doubles per success
  (slow start) until a first 429 or a known limit; then it halves on 429 and grows by one per
  window of successes (AIMD, like inspect_ai's adaptive concurrency). A 529 or 5xx is the provider's
  load, not this key's limit: it backs off only its own request (``clients.retry``) and cuts the window
  only when ``OVERLOAD_STREAK`` come in a row;
- no wait the provider announced is running (``clients.headers``: ``retry-after``, or the resets
  of a 429): it holds every call of the key not yet handed out;
- the limits allow it: requests, input and output tokens per minute (Anthropic) and total tokens per
  minute (OpenAI, which counts input + max_tokens), each a continuously refilled bucket
  (``clients.bucket.Pace``) debited as each call is handed out. Once the provider reports a limit's
  ``remaining``, the bucket is the provider's own (capacity the limit, level read from the reports):
  a reply reporting ``remaining: 0`` frees the next call after one call's refill (60/limit seconds), not at
  the reset, which is the time of *full* replenishment. Limits the provider announces replace looser
  configured ones.

A call already handed out when a 429 arrives is not recalled: it is on its way (one round trip).

Each call is held under its process's holder id (``holder_id``: a game runner's Ray actor id). A runner lost
mid-sweep leaves its calls in flight and its waiting calls behind: once the driver's pool notices the loss it
retires the holder (``retire``), which frees its slots, cancels its queued calls and closes its mailboxes at once,
so its replacement gets the whole window. A retired holder is retired for good: should it be alive after all (a
runner that only stopped answering for a while), whatever it asks is refused (``RETIRED``), so none of the calls of
the games its replacement now plays goes out twice; its releases still teach the key what the provider said.

The actor outlives the drivers on a cluster, so a driver killed outright leaves its calls in flight
and its workers' waiting acquires behind; every few seconds the actor frees the slots and drops the
waiters of every Ray job that has ended (``dead_jobs``), so the next driver gets the whole window at
once. A slot whose release never came is also reclaimed after ``LEASE_S``, the last resort.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar, NamedTuple

import ray
from pydantic import BaseModel

from bargain_ray.clients._ray_private import dead_jobs
from bargain_ray.clients.bucket import Pace, Report
from bargain_ray.clients.headers import Announced, read_headers
from bargain_ray.clients.snapshot import BucketLevel, KeySnapshot
from bargain_ray.config import Limits

ACTOR_NAME = "bargain_ray_limiter_v6"
"""Versioned with what its methods take and mean (v6: calls held by holder, ``retire``): a detached actor an older
driver left running is never spoken to in a newer protocol."""
NAMESPACE = "bargain_ray"
BURST_S = 0.25
"""Seconds of unused rate a bucket may bank until the provider reports the limit: pace evenly, keep the
provider's burst as slack."""
SKEW_S = 0.25
"""Calls handed out this close together may reach the provider in either order: a report is set against
the calls handed out this long before its own too."""
OVERLOAD_STREAK = 3
"""Overloads (529 and other 5xx) in a row, no success between, that cut the window: the provider's load
has persisted. One at a time only back off their own request."""
LEASE_S = 900.0
"""A slot whose release never came is reclaimed after this long, whatever its job's state."""
FLUSH_S = 0.002
"""A process sends its releases this long after the first of them, together (``Limiter.release``)."""
REAP_S = 2.0
"""How often the actor looks for ended jobs whose slots and waiters it still holds."""
RETIRED = "retired"
"""What ``grant`` answers a retired holder in place of the actor's epoch: none of its calls goes out."""
PACES = ("requests_per_minute", "input_tokens_per_minute", "output_tokens_per_minute", "tokens_per_minute")
"""``tokens_per_minute`` is OpenAI's total; it is learned from headers (``config.Limits`` has no field for it yet)."""


class Feedback(BaseModel):
    """What one attempt taught: its HTTP status (0: no response), rate-limit headers, tokens."""

    status: int = 0
    headers: dict[str, str] = {}
    input_tokens: int = 0
    output_tokens: int = 0


class Owner(NamedTuple):
    """Who asked for a call: its Ray job and its holder (``holder_id``)."""

    job: str | None
    holder: str


class Release(BaseModel):
    """A call a process saw end: its key, the ticket it went with, and what the provider said of it."""

    key: str
    ticket: int
    feedback: Feedback


@dataclass
class Handed:
    """A call in flight: when its slot is reclaimed, what it took, when it went, and each pace's ``taken``
    from which a report of its reply is set against later calls (``Pace.read``)."""

    lease_end: float
    need: dict[str, float]
    at: float
    marks: dict[str, float]
    after: dict[str, float]


class KeyState:
    """The limiter of one (provider, key, model). ``clock`` is the monotonic clock its paces, waits and leases are
    read on; its waits run on the event loop's timers, so a clock other than the loop's own (``loop.time``, which is
    ``time.monotonic`` on asyncio's) makes sense only as that loop's."""

    def __init__(self, limits: Limits, clock: Callable[[], float] = time.monotonic) -> None:
        self.limits = limits
        self.clock = clock
        self.learned: dict[str, float] = {}
        self.paces: dict[str, Pace] = {}
        self.slow_start = True
        self.window = 1.0
        self._set_paces()
        self.in_flight: dict[int, Handed] = {}
        self.recent: deque[tuple[float, dict[str, float]]] = deque()  # (hand-out time, taken before it), SKEW_S
        self.waiters: deque[tuple[int, dict[str, float], asyncio.Future[None]]] = deque()
        self.owners: dict[int, Owner] = {}  # ticket -> who asked (waiting or in flight)
        self.paused_until = 0.0
        self.last_cut = 0.0
        self.overloads = 0
        self.out_estimate = 256.0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._changed = asyncio.Event()
        self._dispatcher: asyncio.Task[None] | None = None

    def _set_paces(self) -> None:
        for name in PACES:
            configured = getattr(self.limits, name, None)
            candidates = [v for v in (configured, self.learned.get(name)) if v]
            old = self.paces.pop(name, None)
            if not candidates:
                continue
            if old is not None and old.per_minute == min(candidates):
                self.paces[name] = old
                continue
            self.paces[name] = Pace(min(candidates), BURST_S, self.clock())
            if old is not None:  # reports of calls handed out before are still set against what came after
                self.paces[name].taken = old.taken
        if self.paces and self.slow_start:  # limits known: pacing takes over from slow start
            self.slow_start = False
            self.window = float(self.limits.max_in_flight)

    def configure(self, limits: Limits) -> None:
        if limits != self.limits:
            self.limits = limits
            self.window = min(self.window, float(limits.max_in_flight))
            self._set_paces()
            self._changed.set()

    def _slots(self) -> int:
        return max(int(self.window), 1)

    def _reap(self, now: float) -> None:
        for ticket in [t for t, h in self.in_flight.items() if h.lease_end < now]:
            del self.in_flight[ticket]
            self.owners.pop(ticket, None)

    def forget(self, gone: Callable[[Owner], bool]) -> None:
        """Free the slots and drop the waiters of calls whose owner is ``gone``."""
        tickets = {t for t, owner in self.owners.items() if gone(owner)}
        for ticket in tickets:
            self.in_flight.pop(ticket, None)
            del self.owners[ticket]
        for _, _, fut in (w for w in self.waiters if w[0] in tickets):
            fut.cancel()  # its caller is gone; the dispatcher skips a done future
        if tickets:
            self._changed.set()

    def _need(self, input_tokens: int, max_tokens: int) -> dict[str, float]:
        return {"requests_per_minute": 1.0, "input_tokens_per_minute": float(input_tokens),
                "output_tokens_per_minute": self.out_estimate,
                "tokens_per_minute": float(input_tokens + max_tokens)}

    def _bind(self) -> asyncio.AbstractEventLoop:
        """The running loop; state made on another (an earlier ``asyncio.run``) is left behind."""
        loop = asyncio.get_running_loop()
        if loop is not self._loop:
            self._loop, self._changed, self._dispatcher = loop, asyncio.Event(), None
            self.waiters.clear()
        return loop

    def enqueue(self, ticket: int, input_tokens: int, max_tokens: int = 0,
                owner: Owner | None = None) -> asyncio.Future[None]:
        """Queue ``ticket``; the future is done once a slot is held for it, no announced wait runs and the
        paced rates allow the call (cancelled if its owner is forgotten first)."""
        fut = self._bind().create_future()
        if owner is not None:
            self.owners[ticket] = owner
        self.waiters.append((ticket, self._need(input_tokens, max_tokens), fut))
        if self._dispatcher is None or self._dispatcher.done():
            self._dispatcher = asyncio.create_task(self._dispatch())
        else:
            self._changed.set()
        return fut

    async def acquire(self, ticket: int, input_tokens: int, max_tokens: int = 0) -> None:
        """Return once ``ticket`` may go (``enqueue``)."""
        fut = self.enqueue(ticket, input_tokens, max_tokens)
        try:
            await fut
        except asyncio.CancelledError:
            if self.in_flight.pop(ticket, None) is not None:
                self._changed.set()
            raise

    async def _until_changed(self, timeout: float | None) -> None:
        self._changed.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._changed.wait(), timeout)

    async def _dispatch(self) -> None:
        """Hand out the oldest waiting call whenever it may go; sleep until something changes otherwise."""
        while self.waiters:
            ticket, need, fut = self.waiters[0]
            if fut.done():  # its caller gave up
                self.waiters.popleft()
                continue
            now = self.clock()
            self._reap(now)
            if len(self.in_flight) >= self._slots():
                await self._until_changed(min(h.lease_end for h in self.in_flight.values()) - now)
                continue
            wait = max([self.paused_until - now, *(p.wait_s(need[k], now) for k, p in self.paces.items())])
            if wait > 0:
                await self._until_changed(wait)
                continue
            self.waiters.popleft()
            marks = self._mark(now)
            for name, pace in self.paces.items():
                pace.take(need[name], now)
            after = {name: pace.taken for name, pace in self.paces.items()}
            self.in_flight[ticket] = Handed(now + LEASE_S, need, now, marks, after)
            fut.set_result(None)

    def _mark(self, now: float) -> dict[str, float]:
        """Each pace's ``taken`` before the first call handed out in the last ``SKEW_S`` (this one included)."""
        while self.recent and self.recent[0][0] < now - SKEW_S:
            self.recent.popleft()
        before = {name: pace.taken for name, pace in self.paces.items()}
        self.recent.append((now, before))
        return self.recent[0][1]

    def release(self, ticket: int, fb: Feedback) -> None:
        now = self.clock()
        handed = self.in_flight.pop(ticket, None)
        self.owners.pop(ticket, None)
        told = read_headers(fb.headers)
        if any(self.learned.get(k) != v for k, v in told.limits.items()):
            self.learned.update(told.limits)
            self._set_paces()
        if fb.status == 200:
            self._succeeded(fb, handed)
        elif fb.status == 429 or fb.status >= 500:
            self.overloads = 0 if fb.status == 429 else self.overloads + 1
            if fb.status == 429 or self.overloads >= OVERLOAD_STREAK:
                self._cut(now)
        if handed is not None:
            self._read(told, handed, fb.output_tokens, now)
        wait = told.wait_s(fb.status)
        if wait is None and fb.status == 429:  # a 429 that announced nothing: one request's interval
            pace = self.paces.get("requests_per_minute")
            wait = 1.0 / pace.rate if pace else 1.0
        if wait:
            self.paused_until = max(self.paused_until, now + wait)
        self._changed.set()

    def _cut(self, now: float) -> None:
        """Halve the window, at most once a second (the replies of one burst are one signal)."""
        if self.slow_start or now - self.last_cut > 1.0:
            self.slow_start = False
            self.window = max(1.0, self.window / 2)
            self.last_cut = now

    def _succeeded(self, fb: Feedback, handed: Handed | None) -> None:
        self.overloads = 0
        grown = self.window * 2 if self.slow_start else self.window + 1.0 / self.window
        self.window = min(float(self.limits.max_in_flight), grown)
        if fb.output_tokens:
            self.out_estimate = 0.9 * self.out_estimate + 0.1 * fb.output_tokens
        if handed is not None and fb.input_tokens:  # correct the estimates; OpenAI counts max_tokens, not the output
            took = handed.need
            more_in = fb.input_tokens - took["input_tokens_per_minute"]
            for name, n in (("input_tokens_per_minute", more_in), ("tokens_per_minute", more_in),
                            ("output_tokens_per_minute", fb.output_tokens - took["output_tokens_per_minute"])):
                if name in self.paces:
                    self.paces[name].adjust(n)

    def _read(self, told: Announced, handed: Handed, output_tokens: int, now: float) -> None:
        """Each limit the reply reports: the provider's bucket as it stands (``Pace.read``). Its output
        tokens are counted when written, so a report read as the request arrived may not hold them yet."""
        for name, pace in self.paces.items():
            if name in told.remaining:
                pace.read(Report(
                    remaining=told.remaining[name], reset_s=told.resets_s.get(name), age_s=now - handed.at,
                    before=pace.taken - handed.marks.get(name, 0.0), after=pace.taken - handed.after.get(name, 0.0),
                    late=output_tokens if name == "output_tokens_per_minute" else 0,
                    reset_from_now=told.resets_from_now), now)

    def snapshot(self) -> KeySnapshot:
        return KeySnapshot(
            window=self.window, slow_start=self.slow_start, in_flight=len(self.in_flight),
            waiting=len(self.waiters), paces={k: p.per_minute for k, p in self.paces.items()},
            buckets={k: BucketLevel(capacity=p.capacity, level=p.level) for k, p in self.paces.items()},
            paused_until=self.paused_until,
        )


class Mailbox:
    """The calls of one (process, key) handed out and not yet told to it (``Limiters.grant``)."""

    def __init__(self, owner: Owner) -> None:
        self.owner = owner
        self.ready: list[tuple[int, int]] = []
        self.closed = False
        self.takers = 0
        self._event = asyncio.Event()

    def put(self, local_id: int, ticket: int, fut: asyncio.Future[None]) -> None:
        if not fut.cancelled():  # cancelled: its job ended while it waited
            self.ready.append((local_id, ticket))
            self._event.set()

    async def take(self) -> list[tuple[int, int]]:
        """What is ready, once something is. A process has one ``grant`` of a key out at a time, so a newer
        one means the caller of this one is gone (its event loop ended): this one is answered with none."""
        self.takers += 1
        mine = self.takers
        self._event.set()
        while not self.ready and not self.closed and self.takers == mine:
            self._event.clear()
            await self._event.wait()
        if self.takers != mine:
            return []
        ready, self.ready = self.ready, []
        return ready

    def close(self) -> None:
        self.closed = True
        self._event.set()


class Limiters:
    """Every key's state; the body of the Ray actor and of the in-process limiter."""

    def __init__(self) -> None:
        self.keys: dict[str, KeyState] = {}
        self.tickets = itertools.count(time.time_ns())  # a restarted actor's never meet its predecessor's
        self._reaper: asyncio.Task[None] | None = None
        self.epoch = uuid.uuid4().hex
        self.boxes: dict[tuple[str, str], Mailbox] = {}  # (requester, key) -> its calls handed out, not yet told
        self.retired: set[str] = set()
        """Holders retired (``retire``): what they ask is answered ``RETIRED``."""

    def _state(self, key: str, limits: Limits, job: str | None) -> KeyState:
        """The key's state, reconfigured if its caller sent other limits than the last one did."""
        if job is not None and (self._reaper is None or self._reaper.done()):
            self._reaper = asyncio.create_task(self._forget_ended_jobs())
        state = self.keys.get(key)
        if state is None:
            state = self.keys[key] = KeyState(limits)
        else:
            state.configure(limits)
        return state

    async def acquire(self, key: str, limits: Limits, input_tokens: int, max_tokens: int = 0) -> int:
        """A ticket once the call may go (the in-process limiter's way; workers ``grant``)."""
        ticket = next(self.tickets)
        await self._state(key, limits, None).acquire(ticket, input_tokens, max_tokens)
        return ticket

    async def grant(self, key: str, limits: Limits, job: str | None, requester: str, epoch: str | None,
                    needs: list[tuple[int, int, int]], settled: list[Release]) -> tuple[str, list[tuple[int, int]]]:
        """Queue one process's waiting calls of ``key`` and answer once any of its calls is handed out.

        ``needs`` are (the caller's id, input tokens, max tokens) of calls it had not sent yet; each queues
        in arrival order with every other caller's. The answer is this actor's ``epoch`` and (caller's id,
        ticket) of every call of ``requester`` handed out by then; the rest come with its next ``grant``.
        ``settled`` are releases the caller had not sent yet, taken first. A caller that names another
        epoch spoke to an earlier incarnation (restarted since: its queue is gone): it is answered at once
        with none, and sends what it still waits for again. A retired ``requester`` is answered ``RETIRED``.
        """
        for done in settled:
            self.settle(done)
        if requester in self.retired:
            return RETIRED, []
        if epoch is not None and epoch != self.epoch:
            return self.epoch, []
        state = self._state(key, limits, job)
        owner = Owner(job, requester)
        box = self.boxes.get((requester, key))
        if box is None:
            box = self.boxes[(requester, key)] = Mailbox(owner)
        for local_id, input_tokens, max_tokens in needs:
            ticket = next(self.tickets)
            state.enqueue(ticket, input_tokens, max_tokens, owner).add_done_callback(
                functools.partial(box.put, local_id, ticket))
        return self.epoch, await box.take()

    async def retire(self, holder: str) -> None:
        """The game runner ``holder`` was lost: free its slots, cancel its queued calls, answer its grants still out
        with none; from now on it is answered ``RETIRED``."""
        self.retired.add(holder)
        self._forget(lambda owner: owner.holder == holder)

    def _forget(self, gone: Callable[[Owner], bool]) -> None:
        """Free every slot, queued call and mailbox of the owners that are ``gone``."""
        for state in self.keys.values():
            state.forget(gone)
        for where in [w for w, box in self.boxes.items() if gone(box.owner)]:
            self.boxes.pop(where).close()

    def _forget_jobs(self, ended: set[str]) -> None:
        """Free every slot, queued call and mailbox of the ``ended`` jobs."""
        self._forget(lambda owner: owner.job in ended)

    async def _forget_ended_jobs(self) -> None:
        """While any call of a job is held, free those of jobs that have ended (a driver killed outright)."""
        while any(state.owners for state in self.keys.values()):
            await asyncio.sleep(REAP_S)
            self._forget_jobs(dead_jobs())

    def settle(self, done: Release) -> None:
        if done.key in self.keys:
            self.keys[done.key].release(done.ticket, done.feedback)

    async def release(self, settled: list[Release]) -> None:
        """The calls a worker saw end, sent together (``Limiter.release``)."""
        for done in settled:
            self.settle(done)

    async def snapshot(self) -> dict[str, KeySnapshot]:
        return {k: s.snapshot() for k, s in self.keys.items()}


@dataclass
class Waiting:
    """One process's calls of one key waiting for the cluster's limiter (``Limiter``)."""

    loop: asyncio.AbstractEventLoop
    unsent: dict[int, tuple[int, int]] = field(default_factory=dict)  # id -> (input tokens, max tokens)
    sent: dict[int, tuple[int, int]] = field(default_factory=dict)  # queued at the actor, not handed out
    futures: dict[int, asyncio.Future[int]] = field(default_factory=dict)
    epoch: str | None = None
    pump: asyncio.Task[None] | None = None


class Limiter:
    """One key's limiter as a client sees it: Ray actor when Ray runs, else in-process.

    An actor call costs more CPU than the limiter's own work, so a process speaks to the actor for many
    calls at once. Its waiting calls of a key go in one ``grant`` (all those waiting when it is sent), one
    at a time, each answered with every call of the process handed out by then. Its releases, of every
    key, go together ``FLUSH_S`` after the first (or with the next ``grant``, if sooner).
    """

    _local: Limiters | None = None
    _unsent: ClassVar[dict[Any, list[Release]]] = {}  # actor -> releases for it
    _flush_loop: ClassVar[asyncio.AbstractEventLoop | None] = None  # where the pending send is scheduled
    _waiting: ClassVar[dict[str, Waiting]] = {}
    _ids: ClassVar[Iterator[int]] = itertools.count(1)

    def __init__(self, key: str, limits: Limits) -> None:
        self.key = key
        self.limits = limits
        self._actor = _actor()
        self._job = ray.get_runtime_context().get_job_id() if self._actor is not None else None
        self._requester = holder_id()
        if self._actor is None and Limiter._local is None:
            Limiter._local = Limiters()

    async def acquire(self, input_tokens: int, max_tokens: int) -> int:
        """A ticket once the call may go (``max_tokens``: what it may write, as OpenAI's token limit counts it)."""
        if self._actor is None:
            assert Limiter._local is not None  # made in __init__, where there is no actor
            return await Limiter._local.acquire(self.key, self.limits, input_tokens, max_tokens)
        loop = asyncio.get_running_loop()
        waiting = Limiter._waiting.get(self.key)
        if waiting is None or waiting.loop is not loop:  # one made on an ended loop (an earlier asyncio.run)
            waiting = Limiter._waiting[self.key] = Waiting(loop)
        local_id = next(Limiter._ids)
        fut = waiting.futures[local_id] = loop.create_future()
        waiting.unsent[local_id] = (input_tokens, max_tokens)
        if waiting.pump is None or waiting.pump.done():
            waiting.pump = loop.create_task(self._pump(waiting))
        try:
            return await fut
        except asyncio.CancelledError:
            if waiting.unsent.pop(local_id, None) is not None:  # never sent: forgotten here
                waiting.futures.pop(local_id, None)
            raise  # sent: its ticket is released when it comes (``_pump``)

    async def _pump(self, waiting: Waiting) -> None:
        """``grant`` after ``grant`` while calls of this key wait in this process."""
        while waiting.unsent or waiting.sent:
            needs = [(i, *need) for i, need in waiting.unsent.items()]
            waiting.sent.update(waiting.unsent)
            waiting.unsent.clear()
            try:
                epoch, granted = await self._actor.grant.remote(
                    self.key, self.limits, self._job, self._requester, waiting.epoch, needs, self._take())
            except ray.exceptions.ActorDiedError:  # killed for good (Ray restarts it otherwise): a new one, fresh
                self._actor = _actor()
                waiting.unsent.update(waiting.sent)
                waiting.sent.clear()
                waiting.epoch = None
                continue
            if epoch == RETIRED:
                _refuse(waiting)
                return
            if waiting.epoch not in (None, epoch):  # the actor restarted: what it had queued is gone
                waiting.unsent.update(waiting.sent)
                waiting.sent.clear()
            waiting.epoch = epoch
            for local_id, ticket in granted:
                waiting.sent.pop(local_id, None)
                fut = waiting.futures.pop(local_id, None)
                if fut is None or fut.done():  # its caller gave up meanwhile
                    self.release(ticket, Feedback())
                else:
                    fut.set_result(ticket)

    def release(self, ticket: int, feedback: Feedback) -> None:
        """Fire and forget: the caller never waits on bookkeeping."""
        done = Release(key=self.key, ticket=ticket, feedback=feedback)
        if self._actor is None:
            assert Limiter._local is not None  # made in __init__, where there is no actor
            Limiter._local.settle(done)
            return
        # to the actor that handed it out: after one was killed for good, a stale handle's go nowhere
        Limiter._unsent.setdefault(self._actor, []).append(done)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no event loop (a caller outside async code): now
            Limiter._send()
            return
        if Limiter._flush_loop is not loop:  # none pending here (one scheduled on an ended loop never runs)
            Limiter._flush_loop = loop
            loop.call_later(FLUSH_S, Limiter._send)

    def _take(self) -> list[Release]:
        return Limiter._unsent.pop(self._actor, [])

    @staticmethod
    def _send() -> None:
        Limiter._flush_loop = None
        unsent, Limiter._unsent = Limiter._unsent, {}
        for actor, settled in unsent.items():
            actor.release.remote(settled)


class Retired(RuntimeError):
    """The cluster's limiter retired this process: its game runner was replaced, and none of its calls goes out."""


def _refuse(waiting: Waiting) -> None:
    """Fail every call of a retired process that still waits (their games are played by its replacement)."""
    for fut in waiting.futures.values():
        if not fut.done():
            fut.set_exception(Retired("this game runner was replaced after it was reported lost"))
    waiting.futures.clear()
    waiting.unsent.clear()
    waiting.sent.clear()


def holder_id() -> str:
    """The id this process's calls are held under, at the cluster's limiter and at the budget: its Ray actor's id (a
    game runner's, as its pool knows it: ``execution.worker.holder_of``), else its Ray worker's; "" without Ray."""
    if not ray.is_initialized():
        return ""
    context = ray.get_runtime_context()
    return context.get_actor_id() or context.get_worker_id()


def retire_holder(holder: str) -> None:
    """Retire ``holder`` at the cluster's limiter, if one runs (fire and forget: see ``Limiters.retire``)."""
    try:
        actor = ray.get_actor(ACTOR_NAME, namespace=NAMESPACE)
    except ValueError:  # no limiter: nothing is held
        return
    actor.retire.remote(holder)


RemoteLimiters = ray.remote(num_cpus=0, max_concurrency=100_000)(Limiters)  # type: ignore[call-overload]  # Ray's overloads name no actor option


def start_limiters() -> Any:
    """The cluster's limiter actor, created now if it does not run yet (a driver asks before its workers start, so
    the actor's process starts beside theirs rather than after their first call); None without Ray."""
    return _actor()


def _actor() -> Any:
    """The cluster's limiter actor (created on first use), or None without Ray."""
    if not ray.is_initialized():
        return None
    # restarted wherever Ray can if its node dies (state is relearned); calls to it are retried
    return RemoteLimiters.options(
        name=ACTOR_NAME, namespace=NAMESPACE, get_if_exists=True, lifetime="detached",
        max_restarts=-1, max_task_retries=-1,
    ).remote()
