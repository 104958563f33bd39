"""A per-minute rate as a continuously refilled token bucket: the client's pacing and the simulated
provider's enforcement are the same arithmetic, written once."""

from __future__ import annotations

import math
import time


class Bucket:
    """Holds up to ``burst_s`` seconds of a per-minute rate and refills continuously; a debit larger than
    the bucket goes when it is full (the bucket may go negative and refills from there)."""

    def __init__(self, per_minute: float, burst_s: float) -> None:
        self.per_minute = per_minute
        self.rate = per_minute / 60.0
        self.capacity = max(self.rate * burst_s, 1.0)
        self.level = self.capacity
        self.stamp = time.monotonic()

    def _refill(self, now: float) -> None:
        self.level = min(self.capacity, self.level + (now - self.stamp) * self.rate)
        self.stamp = now

    def wait_s(self, n: float, now: float) -> float:
        """Seconds until ``n`` may be taken (0: now)."""
        self._refill(now)
        need = min(n, self.capacity)
        return 0.0 if self.level >= need else (need - self.level) / self.rate

    def take(self, n: float, now: float) -> None:
        self._refill(now)
        self.level -= n

    def adjust(self, n: float) -> None:
        """Correct an earlier debit by ``n`` (actual minus estimated)."""
        self.level -= n

    def remaining(self, now: float) -> int:
        """What may be taken now (the bucket's level, not a share of the per-minute limit)."""
        self._refill(now)
        return max(math.floor(self.level), 0)

    def full_in(self, now: float) -> float:
        """Seconds until the bucket is full again."""
        self._refill(now)
        return max(self.capacity - self.level, 0.0) / self.rate
