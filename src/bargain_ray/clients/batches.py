"""What the batch APIs share: where a batch goes, what each request got back, and the client that batches.

A ``BatchedClient`` is a ``ModelClient``: it builds the request exactly as the online client would
(same body, recorded the same), hands it to ``submit`` (the cluster-wide batcher, supplied by
``execution``, so this package never imports Ray) and waits for its own result. A request its batch
returns errored or expired is retried through the ordinary online path of the same client (ours: the
game waits one online call instead of another batch round trip); a success costs the batch price.

Text from outside is masked on its one way in: every ``BatchAPI`` method raises only ``BatchFailed`` (its text
masked of the route's key, ``clients.retry.describe``), returns batch ids masked and results whose errors are masked
and whose answers are admitted (``Sent.admitted``: masked, usage bounded), so what the batcher stores, prints or
sends back across Ray can carry no key. A batch id the provider echoed the key into is polled by the id itself, kept
in the ``BatchAPI`` only: a batcher started again finds its journaled (masked) id unknown at the provider, and its
requests go online (ours: the key is never journaled to save the batch).
"""

from __future__ import annotations

import hashlib
import re
import time
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, Field

from bargain_ray.clients.http import HTTPClient, Sent, limiter_key
from bargain_ray.clients.retry import ImplausibleUsage, describe
from bargain_ray.core.errors import TechnicalFailure
from bargain_ray.core.prompt import Prompt
from bargain_ray.core.records import Reply, utc_now
from bargain_ray.core.secrets import mask

if TYPE_CHECKING:
    from bargain_ray.clients.registry import API


class BatchRoute(BaseModel):
    """One (provider, key, model) and its batch API: the requests that may share a batch.

    Holds the key, because the batcher sends with it: it travels as a Ray call argument (the object
    store, as the workers' keys do) and is never journaled, logged or shown (``repr=False``).
    """

    api: str
    """The API whose batch API this is (``clients.registry``)."""
    provider: str
    base_url: str | None
    model: str
    api_key: str = Field(repr=False)
    timeout_s: float = 600.0

    @property
    def key(self) -> str:
        """The route's name without its secret (the limiter's key), as journaled."""
        return limiter_key(self.provider, self.base_url, self.api_key, self.model)


CUSTOM_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
"""What Anthropic accepts as a custom id (OpenAI takes any string): ours, the call id when it fits."""


def custom_id(call_id: str) -> str:
    """The call id itself, or (if too long or unusual for a custom id) a stable hash of it."""
    return call_id if CUSTOM_ID.match(call_id) else "h-" + hashlib.sha256(call_id.encode()).hexdigest()[:40]


@dataclass
class BatchResult:
    """One request of an ended batch: what it answered, or why not (errored, expired: retryable)."""

    batch_id: str
    sent: Sent | None = None
    error: str | None = None


FIND_SLACK_S = 600.0
"""How far the provider's clock may run behind ours when ``find`` lists the batches created since an intent."""
INTENT_KEY = "bargain_ray_intent"
"""The metadata key an intent's key travels under (OpenAI's batch metadata)."""


class BatchFailed(Exception):
    """A batch API call failed (after its retries); the text is masked of the route's key."""


T = TypeVar("T")


class BatchAPI(ABC):
    """One provider's batch API: create a batch, see whether it ended, read its results by custom id.

    A provider module implements ``_create``, ``_find``, ``_ended`` and ``_results``; the public methods are the one way
    their text comes in: a failure is raised as ``BatchFailed`` with masked text, each result's error is masked.
    """

    def __init__(self, route: BatchRoute, api: API) -> None:
        self.route = route
        self.errors = api.sdk_errors()
        self._ids: dict[str, str] = {}
        """masked batch id -> the provider's, for the ids the key was masked out of."""

    async def create(self, requests: dict[str, dict[str, Any]], intent: str) -> str:  # free-form: a request body, JSON as sent
        """Submit ``custom_id -> request body`` as one batch; its id. ``intent`` is its key (journaled first), sent
        along where the API takes one, so ``find`` knows the batch again."""
        return self._shown(await self._masked(self._create(requests, intent)))

    async def find(self, intent: str, size: int, since: float) -> list[str]:
        """The batches created since ``since`` (epoch seconds, ``FIND_SLACK_S`` allowed for the provider's clock)
        that may be intent ``intent``'s, newest first: the one carrying its key where the API takes one, else
        every batch of ``size`` requests (the caller tells them apart by their results' custom ids)."""
        return [self._shown(b) for b in await self._masked(self._find(intent, size, since - FIND_SLACK_S))]

    async def ended(self, batch_id: str) -> bool:
        """Whether every request of the batch has its result."""
        return await self._masked(self._ended(self._ids.get(batch_id, batch_id)))

    async def results(self, batch_id: str) -> dict[str, BatchResult]:
        """custom_id -> result of an ended batch, each error masked, each answer admitted (one out of bounds is
        an error: its request goes online, as an errored one does)."""
        results = await self._masked(self._results(self._ids.get(batch_id, batch_id)))
        return {c: self._admitted(r, batch_id) for c, r in results.items()}

    def _shown(self, batch_id: str) -> str:
        """The provider's batch id as the runner keeps it: masked of the key (the id itself is kept here)."""
        shown = mask(batch_id, self.route.api_key)
        if shown != batch_id:
            self._ids[shown] = batch_id
        return shown

    def _admitted(self, result: BatchResult, batch_id: str) -> BatchResult:
        key = self.route.api_key
        try:
            sent = result.sent.admitted(key) if result.sent is not None else None
        except ImplausibleUsage as exc:
            return BatchResult(batch_id, error=f"{type(exc).__name__}: {exc}")
        return BatchResult(batch_id, sent=sent, error=mask(result.error, key) if result.error else None)

    async def _masked(self, call: Awaitable[T]) -> T:
        try:
            return await call
        except Exception as exc:  # noqa: BLE001 - every failure leaves as masked text, its cause dropped
            raise BatchFailed(describe(exc, self.route.api_key, self.errors.status_of(exc))) from None

    @abstractmethod
    async def _create(self, requests: dict[str, dict[str, Any]], intent: str) -> str: ...  # free-form: a request body, JSON as sent

    @abstractmethod
    async def _find(self, intent: str, size: int, since: float) -> list[str]: ...

    @abstractmethod
    async def _ended(self, batch_id: str) -> bool: ...

    @abstractmethod
    async def _results(self, batch_id: str) -> dict[str, BatchResult]: ...

    @abstractmethod
    async def close(self) -> None:
        """Release the SDK's connections."""


Submit = Callable[[BatchRoute, dict[str, Any], str], Awaitable[BatchResult]]  # free-form: a request body, JSON as sent
"""(route, request body, call id) -> that request's result, once its batch ended."""


class BatchedClient:
    """Sends each request of ``inner`` through a batch; falls back to ``inner`` online when the batch fails it."""

    def __init__(self, inner: HTTPClient, submit: Submit) -> None:
        self.inner = inner
        self.submit = submit
        self.route = inner.batch_route()

    async def complete(self, prompt: Prompt, call_id: str) -> Reply:
        body = self.inner.body(prompt)
        start, sent_at = time.monotonic(), utc_now()
        try:
            result = await self.submit(self.route, body, call_id)
        except TechnicalFailure:
            raise  # the sweep's batcher is gone for good (``execution.batcher``): the run stops, nothing goes online
        except Exception as exc:  # noqa: BLE001 - a batch that cannot be created or read: the call goes online
            result = BatchResult(batch_id="", error=describe(exc, self.route.api_key))
        if result.sent is not None:
            return self.inner.reply_of(body, result.sent, time.monotonic() - start, [], batched=True, sent_at=sent_at)
        note = f"batch {result.batch_id or '(none)'}: {result.error}"
        try:
            reply = await self.inner.complete(prompt, call_id)
        except TechnicalFailure as exc:
            if exc.reply is not None:
                exc.reply.attempt_errors.insert(0, note)
            raise
        return reply.model_copy(update={"attempt_errors": [note, *reply.attempt_errors], "attempts": reply.attempts + 1,
                                        "sent_at": sent_at})  # sent when it went into its batch

    async def close(self) -> None:
        await self.inner.close()
