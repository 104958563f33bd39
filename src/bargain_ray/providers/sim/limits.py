"""The simulated provider's own rate limits: continuously refilled token buckets."""

from __future__ import annotations

import math
import time
from datetime import UTC, datetime, timedelta

from bargain_ray.providers.sim.config import ServerLimits


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
        self._refill(now)
        return max(math.floor(self.level * self.limit / self.capacity), 0) if self.capacity else 0

    def full_in(self, now: float) -> float:
        self._refill(now)
        return max(self.capacity - self.level, 0.0) / self.rate


class ModelLimits:
    """The buckets of one model: requests, input tokens and output tokens per minute."""

    KINDS = ("requests", "input_tokens", "output_tokens")

    def __init__(self, limits: ServerLimits) -> None:
        per_minute = {
            "requests": limits.requests_per_minute,
            "input_tokens": limits.input_tokens_per_minute,
            "output_tokens": limits.output_tokens_per_minute,
        }
        self.buckets = {k: Bucket(v, limits.burst_s) for k, v in per_minute.items() if v}

    def admit(self, input_tokens: int) -> float:
        """0 and the request is counted, or the seconds to wait (a 429)."""
        now = time.monotonic()
        need = {"requests": 1, "input_tokens": input_tokens, "output_tokens": 1}
        wait = max((b.wait(need[k], now) for k, b in self.buckets.items()), default=0.0)
        if wait:
            return wait
        for kind in ("requests", "input_tokens"):
            if kind in self.buckets:
                self.buckets[kind].take(need[kind], now)
        return 0.0

    def spend_output(self, tokens: int) -> None:
        if "output_tokens" in self.buckets:
            self.buckets["output_tokens"].take(tokens, time.monotonic())

    def headers(self, api: str) -> dict[str, str]:
        """Rate-limit headers as each provider documents them."""
        now = time.monotonic()
        out: dict[str, str] = {}
        for kind, bucket in self.buckets.items():
            reset_s = bucket.full_in(now)
            if api == "anthropic":
                name = kind.replace("_", "-")
                reset = (datetime.now(UTC) + timedelta(seconds=reset_s)).isoformat(timespec="seconds")
                out |= {
                    f"anthropic-ratelimit-{name}-limit": str(int(bucket.limit)),
                    f"anthropic-ratelimit-{name}-remaining": str(bucket.remaining(now)),
                    f"anthropic-ratelimit-{name}-reset": reset.replace("+00:00", "Z"),
                }
            elif kind != "output_tokens":
                name = "requests" if kind == "requests" else "tokens"
                out |= {
                    f"x-ratelimit-limit-{name}": str(int(bucket.limit)),
                    f"x-ratelimit-remaining-{name}": str(bucket.remaining(now)),
                    f"x-ratelimit-reset-{name}": f"{reset_s:.3f}s",
                }
        return out
