"""Settings of the simulated provider (``provider.settings`` of ``conf/provider/sim.yaml``)."""

from __future__ import annotations

import hashlib

from bargain_ray.config import Rates, Strict
from bargain_ray.games.kit.concession import EXPONENTS


class Latency(Strict):
    """Seconds before a reply: lognormal around ``median_s`` (``sigma`` 0 makes it constant)."""

    median_s: float = 0.0
    sigma: float = 0.0
    max_s: float = 30.0


class ServerLimits(Rates):
    """What the server enforces with real 429s; None is unlimited.

    Each limit is a token bucket refilled continuously (as Anthropic documents
    its limits) that holds ``burst_s`` seconds of refill.
    """

    burst_s: float = 1.0


class Faults(Strict):
    """Probability per request of each injected fault (drawn in order, from one seeded stream)."""

    error_5xx: float = 0.0
    overloaded: float = 0.0
    timeout: float = 0.0
    drop: float = 0.0
    malformed: float = 0.0
    refusal: float = 0.0
    overlong: float = 0.0


class BatchSettings(Strict):
    """The batch APIs: seconds from creation until a batch ends, and each request's chance to come back
    errored or expired (drawn at creation, from one seeded stream)."""

    delay_s: float = 2.0
    errored: float = 0.0
    expired: float = 0.0


class SimSettings(Strict):
    """The simulated provider. ``base_url`` set means a server already runs there."""

    host: str = "127.0.0.1"
    port: int = 0
    base_url: str | None = None
    seed: int = 0
    latency: Latency = Latency()
    limits: ServerLimits = ServerLimits()
    faults: Faults = Faults()
    batch: BatchSettings = BatchSettings()
    timeout_sleep_s: float = 5.0
    strategies: dict[str, str] = {}
    apis: dict[str, str] = {}

    def strategy(self, model: str) -> str:
        """The concession kind that answers for ``model``: configured, else a stable hash."""
        if model in self.strategies:
            return self.strategies[model]
        kinds = sorted(EXPONENTS)
        return kinds[int(hashlib.sha256(model.encode()).hexdigest(), 16) % len(kinds)]
