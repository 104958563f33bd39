"""Each model's calls while the sweep runs, read with no Ray traffic of their own: the call journal tailed as it
grows (what was paid, ``store.paid``) and the limiter's snapshot, which the driver polls for the live view anyway
(calls in flight).

What was paid is read from the call journal (one line per paid call), not summed from finished games: a game in
flight has paid calls long before it ends (the bar shows them from the first reply), and a stop leaves games whose
calls were paid and journaled. The bar's figures and the summary's are the same tally of the same lines.
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from pathlib import Path

import ray

from bargain_ray.clients.limiter import ACTOR_NAME, NAMESPACE
from bargain_ray.clients.snapshot import key_limits
from bargain_ray.execution.drift import DriftWatch
from bargain_ray.execution.startup import StartupClock
from bargain_ray.execution.tally import Tally
from bargain_ray.store.calls import CallEntry
from bargain_ray.store.paid import ModelSpend, Spend, SpendTail, paid_call
from bargain_ray.store.status import write_limiter

LIMITER_EVERY_S = 2.0


class ModelCalls(ModelSpend):
    """One model's calls in this invocation: paid (the call journal's), failed and replayed (its games'), in flight
    (the limiter's): its line in the summary, its part of the bar."""

    failed: int = 0
    replayed: int = 0
    in_flight: int = 0
    """As the limiter last reported it (shared by every sweep of the key on a cluster)."""

    @property
    def sent(self) -> int:
        return self.calls + self.failed + self.in_flight


class CallTail:
    """The call journal followed from where this invocation started: each line read once, as it is written (each
    reply handed to ``drift``, when given, as the one place it is seen), with the calls paid per game and the
    earliest send among them."""

    def __init__(self, path: Path, drift: DriftWatch | None = None) -> None:
        self.paid = SpendTail.from_now(path)
        self.opened = time.monotonic()
        """No call of this invocation is sent before its tail exists: a bound for a node's clock that runs behind."""
        self.drift = drift
        self.units: Counter[str] = Counter()
        self.unit_usd: defaultdict[str, float] = defaultdict(float)
        """Calls paid, and their dollars, per game (unit id)."""
        self.first_sent: float | None = None
        """The earliest send of the replies read (each answered, less its latency), on this process's monotonic
        clock."""

    @property
    def spend(self) -> Spend:
        return self.paid.spend

    def read(self) -> bool:
        """Take the lines written since the last read; whether there were any."""
        entries = self.paid.read()
        now = time.monotonic()
        behind = time.time() - now  # the wall clock less the monotonic one: a reply's answered_at, made monotonic
        for entry in entries:
            if (call := paid_call(entry)) is not None:
                self.units[call.unit_id] += 1
                self.unit_usd[call.unit_id] += call.cost_usd
                answered = now if call.answered_at is None else call.answered_at.timestamp() - behind
                sent = max(min(answered, now) - call.latency_s, self.opened)  # a node's clock may run ahead or behind
                self.first_sent = sent if self.first_sent is None else min(self.first_sent, sent)
            if self.drift is not None and isinstance(entry, CallEntry):
                self.drift.see(entry.reply, entry.call_id)
        return bool(entries)


class LimiterWatch:
    """The cluster limiter's state written to ``limiter.json`` every ``LIMITER_EVERY_S`` for the live view
    (another process, outside the cluster), and each model's calls in flight for the bar; the loop never waits on
    the actor, and a failed write is skipped."""

    def __init__(self, path: Path, models: set[str]) -> None:
        self.path, self.models, self.ref, self.last = path, models, None, 0.0
        self.in_flight: dict[str, int] = {}
        self.first_in_flight: float | None = None

    def tick(self) -> bool:
        """Whether a new snapshot came in."""
        came = False
        if self.ref is not None and ray.wait([self.ref], timeout=0)[0]:
            try:
                keys = key_limits(ray.get(self.ref), self.models, time.monotonic())
                self.in_flight = {k.key: k.in_flight for k in keys}
                if self.first_in_flight is None and any(self.in_flight.values()):
                    self.first_in_flight = time.monotonic()  # a call was on its way by now
                came = True
                write_limiter(self.path, keys)
            except (ray.exceptions.RayError, OSError):
                pass  # the view shows the last snapshot; the journals report a full disk
            self.ref = None
        if self.ref is None and time.monotonic() - self.last >= LIMITER_EVERY_S:
            self.last = time.monotonic()
            try:
                self.ref = ray.get_actor(ACTOR_NAME, namespace=NAMESPACE).snapshot.remote()
            except ValueError:
                pass  # no model call yet: the actor starts with the first
        return came


class LiveCalls:
    """Each model's calls as the bar and the summary show them: paid from the call journal, in flight from the
    limiter's last snapshot (every 2 s: between two snapshots a call answered leaves the in-flight count, so calls
    sent never go down). ``before``: what earlier invocations of the folder paid."""

    def __init__(self, path: Path, models: set[str], before: Spend | None = None, clock: StartupClock | None = None,
                 drift: DriftWatch | None = None) -> None:
        self.tail = CallTail(path, drift)
        self.before = before or Spend()
        self.limiter = LimiterWatch(path, models)
        self.clock = clock or StartupClock()
        self.sent: dict[str, int] = {}
        """Per model: calls sent as of the last snapshot (answered or failed then, plus in flight then)."""

    def tick(self, tally: Tally) -> bool:
        """Read what is new; whether anything was."""
        new = self.tail.read()
        if self.limiter.tick():
            new = True
            done = Counter({k: m.calls for k, m in self.tail.spend.models.items()})
            done.update({k: m.failed for k, m in tally.unpaid.items()})
            self.sent = {k: done.get(k, 0) + n for k, n in self.limiter.in_flight.items()}
        for first in (self.tail.first_sent, self.limiter.first_in_flight):
            if first is not None:
                self.clock.mark("request", first)
        return new

    def models(self, tally: Tally) -> dict[str, ModelCalls]:
        """Per model (``provider:model``)."""
        out = {k: ModelCalls(**m.model_dump()) for k, m in self.tail.spend.models.items()}
        for k, u in tally.unpaid.items():
            o = out.setdefault(k, ModelCalls(model=k))
            o.failed, o.replayed, o.rate_limited = u.failed, u.replayed, o.rate_limited + u.rate_limited
        for k, sent in self.sent.items():
            o = out.setdefault(k, ModelCalls(model=k))
            o.in_flight = max(0, sent - o.calls - o.failed)
        return out
