"""The limiter's state as it reports it: per key from the actor (``KeySnapshot``), and as a sweep's rows
(``KeyLimit``, ``LimiterSnapshot``: what ``limiter.json`` holds for the live view).

The limiter writes these and its own code reads them: the store keeps the file, the view shows it, neither
parses the actor's state. No SDK and no Ray here, so a reader of the file imports neither.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel

from bargain_ray.core.records import model_key


class BucketLevel(BaseModel):
    """One paced limit's bucket as the limiter believes the provider holds it."""

    capacity: float
    level: float
    """What it holds as of its last debit or report (refilled since at the limit's rate)."""


class KeySnapshot(BaseModel):
    """One limiter key as the actor holds it (``KeyState.snapshot``)."""

    window: float
    """Calls in flight it allows now (slow start, then AIMD: halves on a 429 or on persisting overloads)."""
    slow_start: bool
    in_flight: int
    waiting: int
    paces: dict[str, float] = {}
    """Paced rates per minute (requests, tokens) in force."""
    buckets: dict[str, BucketLevel] = {}
    paused_until: float = 0.0
    """The actor's monotonic clock at which the wait the provider announced ends (0: none)."""


class KeyLimit(BaseModel):
    """One limiter key (provider and model; the key's digest is left out) as a sweep's live view shows it."""

    key: str
    window: float
    """Calls in flight the limiter allows now (AIMD: halves on a 429 or on persisting overloads)."""
    slow_start: bool
    in_flight: int
    waiting: int
    paces: dict[str, float]
    """Paced rates per minute (requests, tokens) in force."""
    paused_for_s: float
    """Seconds of a wait the provider announced (retry-after) still to run."""


class LimiterSnapshot(BaseModel):
    """``limiter.json``: the rows of a sweep's keys, and when the driver read them (UTC)."""

    at: str
    keys: list[KeyLimit]


def key_limits(raw: Mapping[str, KeySnapshot], models: set[str], now: float) -> list[KeyLimit]:
    """The actor's ``snapshot()`` as a sweep's rows: keys of its ``models`` only (the actor is shared by the
    cluster), named provider:model (the key's digest left out); ``now`` is the monotonic clock the actor's
    ``paused_until`` is on (the same host's, so on another node the pause is approximate)."""
    out = []
    for key, state in raw.items():
        provider, _, model = key.split(":", 2) if key.count(":") >= 2 else (key, "", key)
        if model in models:
            out.append(KeyLimit(key=model_key(provider, model), window=state.window, slow_start=state.slow_start,
                                in_flight=state.in_flight, waiting=state.waiting, paces=state.paces,
                                paused_for_s=max(0.0, state.paused_until - now)))
    return out
