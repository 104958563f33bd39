"""Settings of the simulated provider (``provider.settings`` of ``conf/provider/sim.yaml``)."""

from __future__ import annotations

import hashlib
from typing import Literal

from pydantic import Field

from bargain_ray.config import Rates, Strict
from bargain_ray.config.schema import MAX_WAIT_S, MIN_PER_MINUTE
from bargain_ray.games.kit.concession import EXPONENTS, Kind

Strategy = Kind
"""A concession kind the sim answers as (``games.kit.concession``)."""


MAX_SIGMA = 10.0
"""The widest spread a drawn latency or reply may have (``Latency.sigma``, ``SimSettings.reply_noise``; ours): far
wider than any a rehearsal needs; a lognormal draw of a spread of a hundred or so overflows a float."""
MAX_BATCH_S = 86_400.0
"""The longest a simulated batch may take to end (ours: the providers' own batch window, a day)."""


class Latency(Strict):
    """Seconds before a reply: lognormal around ``median_s`` (``sigma`` 0 makes it constant)."""

    median_s: float = Field(0.0, ge=0, le=MAX_WAIT_S)
    sigma: float = Field(0.0, ge=0, le=MAX_SIGMA)
    max_s: float = Field(30.0, ge=0, le=MAX_WAIT_S)


class ServerLimits(Rates):
    """What the server enforces with real 429s; None is unlimited.

    Each limit is a token bucket refilled continuously (as Anthropic and OpenAI document
    theirs) that holds ``burst_s`` seconds of refill (60: the whole per-minute limit, as
    documented; less: a limit enforced over shorter intervals) and starts full. Each response
    reports its ``remaining`` (the bucket's level, floored) and its reset, the time until the
    bucket is *full* again. The Anthropic API enforces requests, input and output tokens; the
    OpenAI API requests and ``tokens_per_minute``, a total that counts each request's input
    and ``max_tokens`` when it arrives (as OpenAI counts it).
    """

    tokens_per_minute: float | None = Field(None, ge=MIN_PER_MINUTE)
    burst_s: float = Field(1.0, gt=0, le=MAX_WAIT_S)
    retry_after: bool = True
    """False: 429s carry only the rate-limit headers (an API that announces its limits, never a retry-after)."""
    report_at: Literal["response", "arrival"] = "response"
    """When a reply's rate-limit headers are read off the buckets: as it is answered, or as its request was
    admitted (a gateway that limits before the model runs; the calls admitted meanwhile are not in it)."""


class Faults(Strict):
    """Probability per request of each injected fault (drawn in order, from one seeded stream)."""

    error_5xx: float = Field(0.0, ge=0, le=1)
    overloaded: float = Field(0.0, ge=0, le=1)
    timeout: float = Field(0.0, ge=0, le=1)
    drop: float = Field(0.0, ge=0, le=1)
    malformed: float = Field(0.0, ge=0, le=1)
    refusal: float = Field(0.0, ge=0, le=1)
    overlong: float = Field(0.0, ge=0, le=1)


class BatchSettings(Strict):
    """The batch APIs: seconds from creation until a batch ends, and each request's chance to come back
    errored or expired (drawn at creation, from one seeded stream)."""

    delay_s: float = Field(2.0, ge=0, le=MAX_BATCH_S)
    errored: float = Field(0.0, ge=0, le=1)
    expired: float = Field(0.0, ge=0, le=1)
    create_delay_s: float = Field(0.0, ge=0, le=MAX_WAIT_S)
    """Seconds a create call's answer waits after the batch is created (listed, billed): the window in which a
    client killed has paid for a batch it never heard of."""


class VersionChange(Strict):
    """From the ``at_call``-th reply the server gives (of ``model`` only, when named), it reports ``version`` as
    the model that answered, and OpenAI-style replies the fingerprint ``fp_<version>``: a provider changing what
    serves a model name mid-sweep, for the drift guard's tests."""

    at_call: int = Field(ge=1)
    version: str = Field(min_length=1)
    model: str | None = None

    def served(self, model: str, answered: int) -> tuple[str, str] | None:
        """(model string, fingerprint) the ``answered``-th reply of ``model`` reports, None to report as usual."""
        if (self.model is None or self.model == model) and answered >= self.at_call:
            return self.version, f"fp_{self.version}"
        return None


class SimSettings(Strict):
    """The simulated provider. ``base_url`` set means a server already runs there."""

    host: str = "127.0.0.1"
    port: int = Field(0, ge=0, le=65535)
    base_url: str | None = None
    seed: int = 0
    latency: Latency = Latency()
    limits: ServerLimits = ServerLimits()
    faults: Faults = Faults()
    model_faults: dict[str, Faults] = {}
    """model -> the faults of its requests instead of ``faults`` (e.g. an observer model that only refuses)."""
    batch: BatchSettings = BatchSettings()
    timeout_sleep_s: float = Field(5.0, ge=0, le=MAX_WAIT_S)
    strategies: dict[str, Strategy] = {}
    apis: dict[str, str] = {}
    reply_noise: float = Field(0.0, ge=0, le=MAX_SIGMA)
    """0: each reply is the model's strategy, exactly (a rehearsal's replicate games of one cell play alike, so
    its CIs have no width). Above 0: replies drawn around it, reproducibly (``server.strategy_params``)."""
    misread: float = Field(0.0, ge=0, le=1)
    """The chance that a free-text observer's verdict is drawn at random among the other allocation types instead
    of read from the transcript (ours: a stochastic observer, so re-reading a transcript can disagree, as the
    judging panel measures); drawn per request, reproducibly, like ``reply_noise``. 0: the observer reads exactly."""
    served_by: dict[str, str] = {}
    """model -> the upstream provider its OpenAI-style replies name in a top-level ``provider`` field, as
    OpenRouter's do (e.g. ``{"claude-haiku-5-5": "Anthropic"}``); a model not named gets no such field."""
    served_version_change: VersionChange | None = None

    def strategy(self, model: str) -> Strategy:
        """The concession kind that answers for ``model``: configured, else a stable hash."""
        if model in self.strategies:
            return self.strategies[model]
        kinds = sorted(EXPONENTS)
        return kinds[int(hashlib.sha256(model.encode()).hexdigest(), 16) % len(kinds)]
