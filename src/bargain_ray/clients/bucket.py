"""A per-minute rate as a continuously refilled token bucket: the simulated provider's enforcement and the
client's model of the provider's bucket (``Pace``) are the same arithmetic, written once."""

from __future__ import annotations

import math
from dataclasses import dataclass


class Bucket:
    """Holds up to ``burst_s`` seconds of a per-minute rate and refills continuously; a debit larger than
    the bucket goes when it is full (the bucket may go negative and refills from there). It reads no clock: it is
    handed ``now``, from whatever monotonic clock its owner keeps, when it is made and at each use."""

    def __init__(self, per_minute: float, burst_s: float, now: float) -> None:
        self.per_minute = per_minute
        self.rate = per_minute / 60.0
        self.capacity = max(self.rate * burst_s, 1.0)
        self.level = self.capacity
        self.stamp = now

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


HOLD_S = 0.1
"""Refill a call waits for beyond its own need (``Pace.wait_s``)."""


class Pace(Bucket):
    """One limit of one key as the client models the provider's bucket, refilled at the limit's rate.

    Until the provider reports the limit's ``remaining``, the bucket holds ``burst_s`` seconds of rate (pace
    evenly; the provider's own burst is slack). From the first report on it is the provider's bucket as
    Anthropic and OpenAI document theirs: its capacity is the limit, or less where a report shows a smaller
    bucket (``remaining`` plus the refill until the reported reset, the time of *full* replenishment, bounds
    it), and its level is kept within what each report allows (``read``). ``taken`` counts every debit, so a
    report can be set against the calls handed out after the one it answered.
    """

    def __init__(self, per_minute: float, burst_s: float, now: float) -> None:
        super().__init__(per_minute, burst_s, now)
        self.taken = 0.0
        self.reported = False

    def wait_s(self, n: float, now: float) -> float:
        """Seconds until ``n`` may be taken with ``HOLD_S`` of refill to spare: a call reaches the provider a
        moment after it is handed out, the last of a burst later than the rest, and the provider's bucket
        refills from when it arrives. At the bottom of the bucket that costs one wait of ``HOLD_S``, then
        calls go at the full rate."""
        return super().wait_s(n + self.rate * HOLD_S, now)

    def take(self, n: float, now: float) -> None:
        super().take(n, now)
        self.taken += n

    def adjust(self, n: float) -> None:
        super().adjust(n)
        self.taken += n

    def read(self, report: Report, now: float) -> None:
        """Bring the bucket in line with one response's report of this limit (``Report``).

        If this key alone spends the limit, the provider's level now is at least ``remaining - before``
        (the calls handed out since may all come after the report) and below ``remaining + 1`` plus the
        refill since the hand-out less what the calls handed out after it took (if the report is that old,
        they all came after it; if it is younger, it counts them and the refill alike). The bound kept drops
        the one: the model errs low by less than one call, never high. The capacity is at most
        ``remaining + 1`` plus the refill until the reset (a reset counted from now is that much older).
        """
        self._refill(now)
        aged = report.age_s if report.reset_from_now else 0.0
        bound = math.inf if report.reset_s is None else report.remaining + 1 + self.rate * (report.reset_s + aged)
        start = self.per_minute if not self.reported else self.capacity
        self.capacity = max(min(start, bound), 1.0)
        self.reported = True
        low = report.remaining - report.before
        high = report.remaining + self.rate * report.age_s - report.after - report.late
        self.level = min(max(self.level, low), high, self.capacity)


@dataclass(frozen=True)
class Report:
    """What one response reported of one limit, and what the client took around the call it answered.

    ``remaining`` (floored by the provider) and ``reset_s`` (seconds until the bucket is full: from now, or
    from the report when ``reset_from_now`` is false, as OpenAI's durations are) held at some moment between
    the call's hand-out, ``age_s`` seconds ago, and now. ``after`` is what was taken after the call,
    ``before`` that and what was taken just before it (calls handed out together may arrive swapped);
    ``late`` what the call spent that the report may not count yet (the output tokens it wrote).
    """

    remaining: float
    reset_s: float | None
    age_s: float
    before: float
    after: float
    late: float = 0.0
    reset_from_now: bool = True
