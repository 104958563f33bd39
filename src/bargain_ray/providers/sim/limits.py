"""The simulated provider's own rate limits: continuously refilled token buckets, announced in headers."""

from __future__ import annotations

import math
import time
from datetime import UTC, datetime

from pydantic import BaseModel

from bargain_ray.providers.sim.config import ServerLimits

KINDS = {"anthropic": ("requests", "input_tokens", "output_tokens"), "openai": ("requests", "tokens")}
"""The limits each API has: OpenAI's ``tokens`` is a total (input + max_tokens), it has no input-token limit."""


class Bucket:
    """Holds up to ``burst_s`` seconds of a per-minute rate; refills continuously."""

    def __init__(self, per_minute: float, burst_s: float) -> None:
        self.limit = per_minute
        self.rate = per_minute / 60.0
        self.capacity = max(self.rate * burst_s, 1.0)
        self.level = self.capacity
        self.stamp = time.monotonic()

    def _refill(self, now: float) -> None:
        self.level = min(self.capacity, self.level + (now - self.stamp) * self.rate)
        self.stamp = now

    def wait(self, n: float, now: float) -> float:
        """Seconds until ``n`` could be taken (0: it can now); a request larger than the bucket needs it full."""
        self._refill(now)
        need = min(n, self.capacity)
        return 0.0 if self.level >= need else (need - self.level) / self.rate

    def take(self, n: float, now: float) -> None:
        self._refill(now)
        self.level -= n

    def remaining(self, now: float) -> int:
        """What may be taken now before a 429 (the bucket's level, not a share of the per-minute limit)."""
        self._refill(now)
        return max(math.floor(self.level), 0)

    def full_in(self, now: float) -> float:
        self._refill(now)
        return max(self.capacity - self.level, 0.0) / self.rate


class Announcement(BaseModel):
    """A response's rate-limit headers and what they state: per limit, what is left and the wall time it resets."""

    headers: dict[str, str]
    remaining: dict[str, int]
    resets_at: dict[str, float]


def go_duration(ms: int) -> str:
    """OpenAI's reset format: ``250ms``, ``1s``, ``1m30.5s``, ``6m0s``."""
    if ms < 1000:
        return f"{ms}ms"
    minutes, rest = divmod(ms, 60_000)
    seconds = f"{rest / 1000:g}s"
    return f"{minutes}m{seconds}" if minutes else seconds


class ModelLimits:
    """The buckets of one model on one API."""

    def __init__(self, limits: ServerLimits, api: str) -> None:
        per_minute = {
            "requests": limits.requests_per_minute,
            "input_tokens": limits.input_tokens_per_minute,
            "output_tokens": limits.output_tokens_per_minute,
            "tokens": limits.tokens_per_minute,
        }
        self.api = api
        self.buckets = {k: Bucket(per_minute[k], limits.burst_s) for k in KINDS[api] if per_minute[k]}

    def admit(self, input_tokens: int, max_tokens: int) -> dict[str, float]:
        """The limits that refuse the request (a 429) with the seconds each needs, or none and it is counted."""
        now = time.monotonic()
        need = {"requests": 1, "input_tokens": input_tokens, "output_tokens": 1, "tokens": input_tokens + max_tokens}
        waits = {k: b.wait(need[k], now) for k, b in self.buckets.items()}
        refused = {k: w for k, w in waits.items() if w > 0}
        if not refused:
            for kind in ("requests", "input_tokens", "tokens"):
                if kind in self.buckets:
                    self.buckets[kind].take(need[kind], now)
        return refused

    def spend_output(self, tokens: int) -> None:
        if "output_tokens" in self.buckets:
            self.buckets["output_tokens"].take(tokens, time.monotonic())

    def announce(self) -> Announcement:
        """Rate-limit headers as each provider documents them; resets rounded up, so each is a true bound.

        Anthropic states its reset as an RFC 3339 time (whole seconds), OpenAI as a duration (whole ms).
        """
        now, wall = time.monotonic(), time.time()
        out = Announcement(headers={}, remaining={}, resets_at={})
        for kind, bucket in self.buckets.items():
            reset_s, left = bucket.full_in(now), bucket.remaining(now)
            if self.api == "anthropic":
                at = float(math.ceil(wall + reset_s))
                name = f"anthropic-ratelimit-{kind.replace('_', '-')}"
                stamp = datetime.fromtimestamp(at, UTC).isoformat().replace("+00:00", "Z")
                out.headers |= {f"{name}-limit": str(int(bucket.limit)), f"{name}-remaining": str(left),
                                f"{name}-reset": stamp}
            else:
                ms = math.ceil(reset_s * 1000)
                at = wall + ms / 1000
                out.headers |= {f"x-ratelimit-limit-{kind}": str(int(bucket.limit)),
                                f"x-ratelimit-remaining-{kind}": str(left),
                                f"x-ratelimit-reset-{kind}": go_duration(ms)}
            out.remaining[kind] = left
            out.resets_at[kind] = at
        return out
