"""Rate limits shared by every worker on every node: one limiter per (provider, key, model).

All limiters live in one named, detached Ray async actor (one process for the
cluster, found by every worker with ``get_if_exists``); each key gets its own
state there. A call costs one round-trip to acquire (which returns when the
call may go) and a fire-and-forget release that reports what the provider
said. Without Ray the same state runs in-process.

Per key, one dispatcher hands calls out in arrival order (so no caller starves), each once

- a slot is free. Calls in flight are capped by a window: until the key's limits are known
  (configured, or announced in a response's headers) it starts at 1 and doubles per success
  (slow start) until a first 429/529 or a known limit; then it halves on 429/529 and grows by one
  per window of successes (AIMD, like inspect_ai's adaptive concurrency);
- no wait the provider announced is running (``clients.headers``: ``retry-after``, or the resets
  of a 429 or of a limit a response reports spent): it holds every call of the key not yet handed out;
- the paced rates allow it: requests, input and output tokens per minute (Anthropic) and total
  tokens per minute (OpenAI, which counts input + max_tokens) are continuously refilled buckets,
  debited as each call is handed out; limits the provider announces replace looser configured ones.

A call already handed out when a 429 arrives is not recalled: it is on its way (one round trip).

The actor outlives the drivers on a cluster, so a driver killed outright leaves its calls in flight
and its workers' waiting acquires behind; every few seconds the actor frees the slots and drops the
waiters of every Ray job that has ended (``dead_jobs``), so the next driver gets the whole window at
once. A slot whose release never came is also reclaimed after ``LEASE_S``, the last resort.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections import deque
from typing import Any

import ray
from pydantic import BaseModel

from bargain_ray.clients.bucket import Bucket
from bargain_ray.clients.headers import read_headers
from bargain_ray.config import Limits

ACTOR_NAME = "bargain_ray_limiter_v3"
NAMESPACE = "bargain_ray"
BURST_S = 0.25
"""Seconds of unused rate a bucket may bank: pace evenly, keep the provider's burst as slack."""
LEASE_S = 900.0
"""A slot whose release never came is reclaimed after this long, whatever its job's state."""
REAP_S = 2.0
"""How often the actor looks for ended jobs whose slots and waiters it still holds."""
PACES = ("requests_per_minute", "input_tokens_per_minute", "output_tokens_per_minute", "tokens_per_minute")
"""``tokens_per_minute`` is OpenAI's total; it is learned from headers (``config.Limits`` has no field for it yet)."""


class Feedback(BaseModel):
    """What one attempt taught: its HTTP status (0: no response), rate-limit headers, tokens."""

    status: int = 0
    headers: dict[str, str] = {}
    input_tokens: int = 0
    output_tokens: int = 0


class Pace(Bucket):
    """A key's pace for one limit: a bucket holding ``BURST_S`` seconds of it (pace evenly, keep the
    provider's own burst as slack)."""

    def __init__(self, per_minute: float) -> None:
        super().__init__(per_minute, BURST_S)


class KeyState:
    """The limiter of one (provider, key, model)."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.learned: dict[str, float] = {}
        self.paces: dict[str, Pace] = {}
        self.slow_start = True
        self.window = 1.0
        self._set_paces()
        self.in_flight: dict[int, tuple[float, dict[str, float]]] = {}  # ticket -> (lease end, what it took)
        self.waiters: deque[tuple[int, dict[str, float], asyncio.Future[None]]] = deque()
        self.jobs: dict[int, str] = {}  # ticket -> the Ray job that asked (waiting or in flight)
        self.paused_until = 0.0
        self.last_cut = 0.0
        self.out_estimate = 256.0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._changed = asyncio.Event()
        self._dispatcher: asyncio.Task[None] | None = None

    def _set_paces(self) -> None:
        for name in PACES:
            configured = getattr(self.limits, name, None)
            candidates = [v for v in (configured, self.learned.get(name)) if v]
            if not candidates:
                self.paces.pop(name, None)
            elif name not in self.paces or self.paces[name].per_minute != min(candidates):
                self.paces[name] = Pace(min(candidates))
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
        for ticket in [t for t, (end, _) in self.in_flight.items() if end < now]:
            del self.in_flight[ticket]
            self.jobs.pop(ticket, None)

    def forget_jobs(self, ended: set[str]) -> None:
        """Free the slots and drop the waiters of calls asked by ``ended`` jobs."""
        gone = {t for t, job in self.jobs.items() if job in ended}
        for ticket in gone:
            self.in_flight.pop(ticket, None)
            del self.jobs[ticket]
        for _, _, fut in (w for w in self.waiters if w[0] in gone):
            fut.cancel()  # its caller is gone; the dispatcher skips a done future
        if gone:
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

    async def acquire(self, ticket: int, input_tokens: int, max_tokens: int = 0, job: str | None = None) -> None:
        """Return once a slot is held for ``ticket``, no announced wait runs and the paced rates allow the call."""
        fut = self._bind().create_future()
        if job is not None:
            self.jobs[ticket] = job
        self.waiters.append((ticket, self._need(input_tokens, max_tokens), fut))
        if self._dispatcher is None or self._dispatcher.done():
            self._dispatcher = asyncio.create_task(self._dispatch())
        else:
            self._changed.set()
        try:
            await fut
        except asyncio.CancelledError:
            self.jobs.pop(ticket, None)
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
            now = time.monotonic()
            self._reap(now)
            if len(self.in_flight) >= self._slots():
                await self._until_changed(min(end for end, _ in self.in_flight.values()) - now)
                continue
            wait = max([self.paused_until - now, *(p.wait_s(need[k], now) for k, p in self.paces.items())])
            if wait > 0:
                await self._until_changed(wait)
                continue
            self.waiters.popleft()
            for name, pace in self.paces.items():
                pace.take(need[name], now)
            self.in_flight[ticket] = (now + LEASE_S, need)
            fut.set_result(None)

    def release(self, ticket: int, fb: Feedback) -> None:
        now = time.monotonic()
        _, took = self.in_flight.pop(ticket, (0.0, {}))
        self.jobs.pop(ticket, None)
        told = read_headers(fb.headers)
        if any(self.learned.get(k) != v for k, v in told.limits.items()):
            self.learned.update(told.limits)
            self._set_paces()
        wait = told.wait_s(fb.status)
        if wait is None and fb.status == 429:  # a 429 that announced nothing: one request's interval
            pace = self.paces.get("requests_per_minute")
            wait = 1.0 / pace.rate if pace else 1.0
        if wait:
            self.paused_until = max(self.paused_until, now + wait)
        if fb.status in (429, 529):
            if self.slow_start or now - self.last_cut > 1.0:
                self.slow_start = False
                self.window = max(1.0, self.window / 2)
                self.last_cut = now
        elif fb.status == 200:
            grown = self.window * 2 if self.slow_start else self.window + 1.0 / self.window
            self.window = min(float(self.limits.max_in_flight), grown)
            if fb.output_tokens:
                self.out_estimate = 0.9 * self.out_estimate + 0.1 * fb.output_tokens
            if took and fb.input_tokens:  # correct the estimates; OpenAI counts max_tokens, not the output
                more_in = fb.input_tokens - took["input_tokens_per_minute"]
                for name, n in (("input_tokens_per_minute", more_in), ("tokens_per_minute", more_in),
                                ("output_tokens_per_minute", fb.output_tokens - took["output_tokens_per_minute"])):
                    if name in self.paces:
                        self.paces[name].adjust(n)
        self._changed.set()

    def snapshot(self) -> dict[str, Any]:
        return {
            "window": self.window, "slow_start": self.slow_start, "in_flight": len(self.in_flight),
            "waiting": len(self.waiters), "paces": {k: p.per_minute for k, p in self.paces.items()},
            "paused_until": self.paused_until,
        }


class Limiters:
    """Every key's state; the body of the Ray actor and of the in-process limiter."""

    def __init__(self) -> None:
        self.keys: dict[str, KeyState] = {}
        self.tickets = itertools.count(time.time_ns())  # a restarted actor's never meet its predecessor's
        self._reaper: asyncio.Task[None] | None = None

    async def acquire(self, key: str, limits: dict[str, Any], input_tokens: int, max_tokens: int = 0,
                      job: str | None = None) -> int:
        if job is not None and (self._reaper is None or self._reaper.done()):
            self._reaper = asyncio.create_task(self._forget_ended_jobs())
        parsed = Limits.model_validate(limits)
        state = self.keys.get(key)
        if state is None:
            state = self.keys[key] = KeyState(parsed)
        else:
            state.configure(parsed)
        ticket = next(self.tickets)
        await state.acquire(ticket, input_tokens, max_tokens, job)
        return ticket

    async def _forget_ended_jobs(self) -> None:
        """While any call of a job is held, free those of jobs that have ended (a driver killed outright)."""
        while any(state.jobs for state in self.keys.values()):
            await asyncio.sleep(REAP_S)
            ended = dead_jobs()
            for state in self.keys.values():
                state.forget_jobs(ended)

    def settle(self, key: str, ticket: int, feedback: dict[str, Any]) -> None:
        if key in self.keys:
            self.keys[key].release(ticket, Feedback.model_validate(feedback))

    async def release(self, key: str, ticket: int, feedback: dict[str, Any]) -> None:
        self.settle(key, ticket, feedback)

    async def snapshot(self) -> dict[str, dict[str, Any]]:
        return {k: s.snapshot() for k, s in self.keys.items()}


class Limiter:
    """One key's limiter as a client sees it: Ray actor when Ray runs, else in-process."""

    _local: Limiters | None = None

    def __init__(self, key: str, limits: Limits) -> None:
        self.key = key
        self.limits = limits.model_dump()
        self._actor = _actor()
        self._job = ray.get_runtime_context().get_job_id() if self._actor is not None else None
        if self._actor is None and Limiter._local is None:
            Limiter._local = Limiters()

    async def acquire(self, input_tokens: int, max_tokens: int) -> int:
        """A ticket once the call may go (``max_tokens``: what it may write, as OpenAI's token limit counts it)."""
        if self._actor is None:
            return await Limiter._local.acquire(self.key, self.limits, input_tokens, max_tokens)
        try:
            return await self._actor.acquire.remote(self.key, self.limits, input_tokens, max_tokens, self._job)
        except ray.exceptions.ActorDiedError:  # killed for good (Ray restarts it otherwise): a new one, fresh
            self._actor = _actor()
            return await self._actor.acquire.remote(self.key, self.limits, input_tokens, max_tokens, self._job)

    def release(self, ticket: int, feedback: Feedback) -> None:
        """Fire and forget: the caller never waits on bookkeeping."""
        data = feedback.model_dump()
        if self._actor is not None:
            self._actor.release.remote(self.key, ticket, data)
        else:
            Limiter._local.settle(self.key, ticket, data)


def dead_jobs() -> set[str]:
    """The ids of the cluster's Ray jobs that have ended.

    Ray's public job listing (``ray.util.state``) goes through the dashboard, which our drivers do not start;
    the GCS job table behind it is read here through ``ray._private.state`` (Ray 2.x). Should that move, no
    job reads as ended and a dead driver's slots fall back to ``LEASE_S``.
    """
    try:
        from ray._private import state

        return {job["JobID"] for job in state.jobs() if job.get("IsDead")}
    except Exception:  # an internal API: any change in it must cost the fallback, never a sweep
        return set()


RemoteLimiters = ray.remote(num_cpus=0, max_concurrency=100_000)(Limiters)


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
