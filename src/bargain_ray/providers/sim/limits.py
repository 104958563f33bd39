"""The simulated provider's own rate limits: continuously refilled token buckets, announced in headers."""

from __future__ import annotations

import math
import time
from datetime import UTC, datetime

from pydantic import BaseModel

from bargain_ray.clients.bucket import Bucket
from bargain_ray.providers.sim.config import ServerLimits

KINDS = {"anthropic": ("requests", "input_tokens", "output_tokens"), "openai": ("requests", "tokens")}
"""The limits each API has: OpenAI's ``tokens`` is a total (input + max_tokens), it has no input-token limit."""


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
        now = time.monotonic()
        self.buckets = {k: Bucket(rate, limits.burst_s, now) for k in KINDS[api] if (rate := per_minute[k])}

    def admit(self, input_tokens: int, max_tokens: int) -> dict[str, float]:
        """The limits that refuse the request (a 429) with the seconds each needs, or none and it is counted."""
        now = time.monotonic()
        need = {"requests": 1, "input_tokens": input_tokens, "output_tokens": 1, "tokens": input_tokens + max_tokens}
        waits = {k: b.wait_s(need[k], now) for k, b in self.buckets.items()}
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
                out.headers |= {f"{name}-limit": str(int(bucket.per_minute)), f"{name}-remaining": str(left),
                                f"{name}-reset": stamp}
            else:
                ms = math.ceil(reset_s * 1000)
                at = wall + ms / 1000
                out.headers |= {f"x-ratelimit-limit-{kind}": str(int(bucket.per_minute)),
                                f"x-ratelimit-remaining-{kind}": str(left),
                                f"x-ratelimit-reset-{kind}": go_duration(ms)}
            out.remaining[kind] = left
            out.resets_at[kind] = at
        return out
