"""Rate limits shared by every worker on every node: one limiter per (provider, key, model).

All limiters live in one named, detached Ray async actor (one process for the
cluster, found by every worker with ``get_if_exists``); each key gets its own
state there. A call costs one round-trip to acquire (which returns when the
call may go) and a fire-and-forget release that reports what the provider
said. Without Ray the same state runs in-process.

Per key: requests, input tokens and output tokens per minute are paced as
reservations on continuously refilled buckets (FIFO, so no caller starves);
calls in flight are capped by a window that halves on 429/529 and grows back
by one per window of successes (AIMD, like inspect_ai's adaptive
concurrency); ``retry-after`` pauses every caller of the key; limits the
provider announces in its rate-limit headers replace looser configured ones.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections import deque
from typing import Any

import ray
from pydantic import BaseModel

from bargain_ray.config import Limits

ACTOR_NAME = "bargain_ray_limiter_v1"
NAMESPACE = "bargain_ray"
BURST_S = 0.25
"""Seconds of unused rate a bucket may bank: pace evenly, keep the provider's burst as slack."""
LEASE_S = 900.0
"""A slot whose release never came (its worker died) is reclaimed after this long."""


class Feedback(BaseModel):
    """What one attempt taught: its HTTP status (0: no response), rate-limit headers, tokens."""

    status: int = 0
    headers: dict[str, str] = {}
    input_tokens: int = 0
    output_tokens: int = 0


class Pace:
    """A rate as a bucket of reservations: ``reserve`` debits now and says when to go."""

    def __init__(self, per_minute: float) -> None:
        self.per_minute = per_minute
        self.rate = per_minute / 60.0
        self.capacity = max(self.rate * BURST_S, 1.0)
        self.level = self.capacity
        self.stamp = time.monotonic()

    def reserve(self, n: float, now: float) -> float:
        self.level = min(self.capacity, self.level + (now - self.stamp) * self.rate)
        self.stamp = now
        self.level -= n
        return now if self.level >= 0 else now - self.level / self.rate

    def adjust(self, n: float) -> None:
        """Correct an earlier reservation by ``n`` (actual minus estimated)."""
        self.level -= n


def _learned(headers: dict[str, str]) -> dict[str, float]:
    """Per-minute limits the provider announced, by our limit names."""
    names = {
        "anthropic-ratelimit-requests-limit": "requests_per_minute",
        "anthropic-ratelimit-input-tokens-limit": "input_tokens_per_minute",
        "anthropic-ratelimit-output-tokens-limit": "output_tokens_per_minute",
        "x-ratelimit-limit-requests": "requests_per_minute",
        "x-ratelimit-limit-tokens": "input_tokens_per_minute",
    }
    out = {}
    for header, name in names.items():
        try:
            out[name] = float(headers[header])
        except (KeyError, ValueError):
            continue
    return out


def _exhausted(headers: dict[str, str]) -> bool:
    """The provider says no request is left right now."""
    for header in ("anthropic-ratelimit-requests-remaining", "x-ratelimit-remaining-requests"):
        if headers.get(header) == "0":
            return True
    return False


def retry_after_s(headers: dict[str, str]) -> float | None:
    """``retry-after-ms`` or ``retry-after`` (seconds) as seconds; HTTP dates are ignored."""
    for name, scale in (("retry-after-ms", 1e-3), ("retry-after", 1.0)):
        try:
            return max(float(headers[name]) * scale, 0.0)
        except (KeyError, ValueError):
            continue
    return None


class KeyState:
    """The limiter of one (provider, key, model)."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.learned: dict[str, float] = {}
        self.paces: dict[str, Pace] = {}
        self._set_paces()
        self.window = float(limits.max_in_flight)
        self.in_flight: dict[int, tuple[float, float, float]] = {}  # ticket -> (lease end, in est., out est.)
        self.waiters: deque[tuple[int, asyncio.Future[None]]] = deque()
        self.paused_until = 0.0
        self.last_cut = 0.0
        self.out_estimate = 256.0

    def _set_paces(self) -> None:
        for name in ("requests_per_minute", "input_tokens_per_minute", "output_tokens_per_minute"):
            configured = getattr(self.limits, name)
            candidates = [v for v in (configured, self.learned.get(name)) if v]
            if not candidates:
                self.paces.pop(name, None)
            elif name not in self.paces or self.paces[name].per_minute != min(candidates):
                self.paces[name] = Pace(min(candidates))

    def configure(self, limits: Limits) -> None:
        if limits != self.limits:
            self.limits = limits
            self.window = min(self.window, float(limits.max_in_flight))
            self._set_paces()

    def _slots(self) -> int:
        return max(int(self.window), 1)

    def _reap(self, now: float) -> None:
        for ticket in [t for t, (end, _, _) in self.in_flight.items() if end < now]:
            del self.in_flight[ticket]

    def _wake(self) -> None:
        """Hand free slots to waiters in arrival order (the slot is taken for them)."""
        now = time.monotonic()
        while self.waiters and len(self.in_flight) < self._slots():
            ticket, fut = self.waiters.popleft()
            if not fut.done():
                self.in_flight[ticket] = (now + LEASE_S, 0.0, 0.0)
                fut.set_result(None)

    async def acquire(self, ticket: int, input_tokens: int) -> None:
        """Return once a slot is held and the paced rates allow the call."""
        self._reap(time.monotonic())
        if self.waiters or len(self.in_flight) >= self._slots():
            fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self.waiters.append((ticket, fut))
            await fut
        now = time.monotonic()
        self.in_flight[ticket] = (now + LEASE_S, float(input_tokens), self.out_estimate)
        need = {"requests_per_minute": 1.0, "input_tokens_per_minute": float(input_tokens),
                "output_tokens_per_minute": self.out_estimate}
        go = max((p.reserve(need[k], now) for k, p in self.paces.items()), default=now)
        while (go := max(go, self.paused_until)) > (now := time.monotonic()):
            await asyncio.sleep(go - now)

    def release(self, ticket: int, fb: Feedback) -> None:
        now = time.monotonic()
        _, in_est, out_est = self.in_flight.pop(ticket, (0.0, 0.0, 0.0))
        learned = _learned(fb.headers)
        if any(self.learned.get(k) != v for k, v in learned.items()):
            self.learned.update(learned)
            self._set_paces()
        wait = retry_after_s(fb.headers)
        if wait is None and (fb.status == 429 or (fb.status == 200 and _exhausted(fb.headers))):
            pace = self.paces.get("requests_per_minute")
            wait = 1.0 / pace.rate if pace else 1.0
        if wait:
            self.paused_until = max(self.paused_until, now + wait)
        if fb.status in (429, 529):
            if now - self.last_cut > 1.0:
                self.window = max(1.0, self.window / 2)
                self.last_cut = now
        elif fb.status == 200:
            self.window = min(float(self.limits.max_in_flight), self.window + 1.0 / self.window)
            if fb.output_tokens:
                self.out_estimate = 0.9 * self.out_estimate + 0.1 * fb.output_tokens
            for name, actual, est in (("input_tokens_per_minute", fb.input_tokens, in_est),
                                      ("output_tokens_per_minute", fb.output_tokens, out_est)):
                if name in self.paces and actual:
                    self.paces[name].adjust(actual - est)
        self._wake()

    def snapshot(self) -> dict[str, Any]:
        return {
            "window": self.window, "in_flight": len(self.in_flight), "waiting": len(self.waiters),
            "paces": {k: p.per_minute for k, p in self.paces.items()}, "paused_until": self.paused_until,
        }


class Limiters:
    """Every key's state; the body of the Ray actor and of the in-process limiter."""

    def __init__(self) -> None:
        self.keys: dict[str, KeyState] = {}
        self.tickets = itertools.count(1)

    async def acquire(self, key: str, limits: dict[str, Any], input_tokens: int) -> int:
        parsed = Limits.model_validate(limits)
        state = self.keys.get(key)
        if state is None:
            state = self.keys[key] = KeyState(parsed)
        else:
            state.configure(parsed)
        ticket = next(self.tickets)
        await state.acquire(ticket, input_tokens)
        return ticket

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
        if self._actor is None and Limiter._local is None:
            Limiter._local = Limiters()

    async def acquire(self, input_tokens: int) -> int:
        if self._actor is not None:
            return await self._actor.acquire.remote(self.key, self.limits, input_tokens)
        return await Limiter._local.acquire(self.key, self.limits, input_tokens)

    def release(self, ticket: int, feedback: Feedback) -> None:
        """Fire and forget: the caller never waits on bookkeeping."""
        data = feedback.model_dump()
        if self._actor is not None:
            self._actor.release.remote(self.key, ticket, data)
        else:
            Limiter._local.settle(self.key, ticket, data)


RemoteLimiters = ray.remote(num_cpus=0, max_concurrency=100_000)(Limiters)


def _actor() -> Any:
    """The cluster's limiter actor (created on first use), or None without Ray."""
    if not ray.is_initialized():
        return None
    # restarted wherever Ray can if its node dies (state is relearned); calls to it are retried
    return RemoteLimiters.options(
        name=ACTOR_NAME, namespace=NAMESPACE, get_if_exists=True, lifetime="detached",
        max_restarts=-1, max_task_retries=-1,
    ).remote()
