"""The simulated provider's request log: one entry per request that arrived, online or in a batch.

Tests and outside checks compare it with what a sweep recorded (``GET /sim/log`` serves it as JSON), so an
entry holds exactly the keys it was given: an online request's (``call_id``, and what its fate added: ``left``,
``done``, an announced wait), a batched request's (``batch_id``, ``custom_id``). A key never given is absent
from the JSON, not null, as it always was.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Literal

from pydantic import BaseModel, TypeAdapter

Fate = Literal["timeout", "dropped", "client_gone", "errored", "expired", "canceled"]
"""A request's end where no HTTP status says it: timed out, its connection dropped, its client gone before the
answer; a batched request errored, expired or canceled."""


class LogEntry(BaseModel):
    """One request as the sim saw it (times are wall clock, ``time.time()``)."""

    request_id: str
    api: str
    model: str
    arrived: float
    status: int | Fate | None = None
    """The HTTP status it got (None while it is answered), or its fate."""
    fault: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    key_sha: str | None = None
    """A short hash of the credential it carried (never the credential)."""
    call_id: str | None = None
    """The id the client named it by (its call-id header); online requests only."""
    left: int | None = None
    """What its admission left in the request bucket; online requests admitted only."""
    done: float | None = None
    """When it was answered (200)."""
    announced_at: float | None = None
    """When the wait its 429 announced began, and when it ends (``wait_until``)."""
    wait_until: float | None = None
    batch_id: str | None = None
    custom_id: str | None = None


LOG = TypeAdapter(list[LogEntry])


def dump_log(log: list[LogEntry]) -> bytes:
    """The log as ``GET /sim/log`` serves it: each entry with the keys it was given."""
    return LOG.dump_json(log, exclude_unset=True)


def requests_inside_waits(log: list[LogEntry], announced_by: tuple[int | Fate | None, ...] = (429,)) -> int:
    """Requests that arrived while a wait announced by an earlier response (of a status in ``announced_by``)
    to the same (API, model, key) still ran: each one a request sent against the provider's word."""
    waits: dict[tuple[str, str, str | None], list[tuple[float, float]]] = defaultdict(list)
    for e in log:
        if e.wait_until and e.status in announced_by:
            waits[(e.api, e.model, e.key_sha)].append((e.announced_at or 0.0, e.wait_until))
    return sum(any(start < e.arrived < end for start, end in waits[(e.api, e.model, e.key_sha)]) for e in log)
