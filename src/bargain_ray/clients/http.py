"""What every HTTP model client shares: limiter, retries, timing, usage, cost and the call record.

A provider module only says how to build the request body from a prompt and
how to send it and read the reply (``HTTPClient.body`` and ``HTTPClient.send``).
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from abc import ABC, abstractmethod
from collections.abc import Awaitable
from dataclasses import dataclass, field, fields, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ValidationError

from bargain_ray.clients.headers import CALL_ID_HEADER
from bargain_ray.clients.limiter import Feedback, Limiter
from bargain_ray.clients.retry import ImplausibleUsage, WaitTooLong, describe, retrying
from bargain_ray.config import ModelConfig
from bargain_ray.config.pricing import cost_usd, estimate_tokens
from bargain_ray.core.errors import Failure, TechnicalFailure
from bargain_ray.core.prompt import Prompt
from bargain_ray.core.records import Reply, Usage, utc_now
from bargain_ray.core.secrets import mask

if TYPE_CHECKING:
    from bargain_ray.clients.batches import BatchRoute
    from bargain_ray.clients.registry import API


@dataclass
class Sent:
    """One successful attempt as the provider answered it."""

    text: str
    stop_reason: str | None
    usage: Usage
    request_id: str | None
    model_version: str | None
    headers: dict[str, str] = field(default_factory=dict)
    served_by: str | None = None
    system_fingerprint: str | None = None

    def admitted(self, secret: str) -> Sent:
        """This answer as the runner keeps it, on its one way in (an attempt's in ``HTTPClient``, a batch's in
        ``BatchAPI.results``): every text and header masked of the key (``core.secrets.mask``: the same mask as
        an error's), its usage within bounds (``check_usage``). All its texts are looked through at once: one
        holding no part of the key (every answer but an echoing server's) is kept as it is."""
        check_usage(self.usage)
        texts: dict[str, Any] = {f.name: v for f in fields(self) if isinstance(v := getattr(self, f.name), str)}
        whole = "\n".join([*texts.values(), *self.headers.keys(), *self.headers.values()])  # no key holds a newline
        if mask(whole, secret) == whole:
            return self
        masked: dict[str, Any] = {k: mask(v, secret) for k, v in texts.items()}  # local: the text fields, masked
        return replace(self, **masked, headers={mask(k, secret): mask(v, secret) for k, v in self.headers.items()})


MAX_CALL_TOKENS = 100_000_000
"""The most tokens of any kind one call may report (ours): fifty times a context window of two million tokens, and
small enough that no table, sum or cost built from them overflows."""


def check_usage(usage: Usage) -> None:
    """Raise ``ImplausibleUsage`` naming the first count out of bounds (negative, or beyond ``MAX_CALL_TOKENS``)."""
    for name, value in usage:
        if not 0 <= value <= MAX_CALL_TOKENS:
            raise ImplausibleUsage(f"usage.{name}={value} is no token count of one call (0 to {MAX_CALL_TOKENS:,}, "
                                   "ours): the answer is neither kept nor priced")


T = TypeVar("T")


async def within(timeout_s: float, attempt: Awaitable[T]) -> T:
    """``attempt`` awaited for at most ``timeout_s`` in all (``Retry.timeout_s``: from the request to the last byte
    of its reply, however slowly it comes), else ``TimeoutError`` saying so."""
    deadline = asyncio.timeout(timeout_s)
    try:
        async with deadline:
            return await attempt
    except TimeoutError:
        if deadline.expired():
            raise TimeoutError(f"no whole reply within retry.timeout_s={timeout_s:g} s") from None
        raise


M = TypeVar("M", bound=BaseModel)


def validated(kind: type[M], body: bytes) -> M | None:
    """A reply's ``body`` as the SDK's own type ``kind``, validated in one pass by pydantic-core (about 30 us), or
    None when it does not validate (a cut body, a field value newer than the pinned SDK): the caller then takes the
    SDK's own ``parse``, which builds the same object field by field, leniently (about 0.3 ms a reply: a fifth of
    the SDK's CPU per call), and keeps what it can or raises."""
    try:
        return kind.model_validate_json(body)
    except ValidationError:
        return None


def body_tokens(body: dict[str, Any]) -> int:  # free-form: a request body, JSON as sent
    """Input tokens of a request body before the call (``estimate_tokens``), for the limiter's reservation."""
    texts = [str(body.get("system", "")), *(str(m.get("content", "")) for m in body.get("messages", []))]
    return estimate_tokens("".join(texts))


def limiter_key(provider: str, base_url: str | None, api_key: str, model: str) -> str:
    """(provider, hash of key and endpoint, model): the calls that share one provider limit."""
    digest = hashlib.sha256(f"{base_url or ''}\0{api_key}".encode()).hexdigest()[:12]
    return f"{provider}:{digest}:{model}"


class HTTPClient(ABC):
    """Complete a prompt through one provider API; retries and limits are applied here, once.

    ``api`` is the API's registry entry (``clients.registry``): how its errors are classified, how its headers
    are read, whether it has a batch API. The key stays in this client (to mask it out of every error text) and
    in its ``batch_route``, the one place a batcher gets it from.
    """

    input_includes_cache = False

    def __init__(self, model: ModelConfig, provider: str, api_key: str, base_url: str | None, api: API) -> None:
        self.model = model
        self.provider = provider
        self.base_url = base_url
        self.api = api
        self.errors = api.sdk_errors()
        self._secret = api_key
        self.limiter = Limiter(limiter_key(provider, base_url, api_key, model.name), model.limits)

    @property
    def batch_api(self) -> str | None:
        """The API whose batch API this client's requests can go through (``clients.batches``), None if none."""
        return self.api.name if self.api.batches is not None else None

    def batch_route(self) -> BatchRoute:
        """Where this client's requests go when batched: its API, endpoint, model and key."""
        from bargain_ray.clients.batches import BatchRoute

        if self.batch_api is None:
            raise ValueError(f"{self.provider} {self.model.name} has no batch API")
        return BatchRoute(api=self.batch_api, provider=self.provider, base_url=self.base_url, model=self.model.name,
                          api_key=self._secret, timeout_s=self.model.retry.timeout_s)

    @abstractmethod
    def body(self, prompt: Prompt) -> dict[str, Any]:  # free-form: a request body, JSON as sent
        """The request body exactly as sent (and recorded)."""

    @abstractmethod
    async def send(self, body: dict[str, Any], headers: dict[str, str]) -> Sent:  # free-form: a request body, as sent
        """One attempt (``headers``: extra HTTP headers); raises the SDK's errors or MalformedReply."""

    @abstractmethod
    async def close(self) -> None:
        """Release the SDK's connections."""

    def _reply(self, body: dict[str, Any], **fields: Any) -> Reply:  # free-form: a request body, JSON as sent
        return Reply(provider=self.provider, model=body["model"], request=body, **fields)

    async def _attempt(self, body: dict[str, Any], errors: list[str], headers: dict[str, str]) -> tuple[Sent, float]:  # free-form: request JSON
        ticket = await self.limiter.acquire(body_tokens(body), self.model.max_tokens)
        start = time.monotonic()
        try:
            sent = (await within(self.model.retry.timeout_s, self.send(body, headers))).admitted(self._secret)
        except BaseException as exc:  # cancellation too: the slot must come back
            status, told = self.errors.status_of(exc), self.errors.headers_of(exc)
            self.limiter.release(ticket, Feedback(status=status, headers=told))
            if not isinstance(exc, Exception):
                raise
            errors.append(describe(exc, self._secret, status))
            if refusal := self.api.read_headers(told).refusal(status):
                raise WaitTooLong(refusal, status) from None
            raise
        latency = time.monotonic() - start
        self.limiter.release(ticket, Feedback(
            status=200, headers=sent.headers,
            input_tokens=sent.usage.input_tokens, output_tokens=sent.usage.output_tokens,
        ))
        return sent, latency

    async def complete(self, prompt: Prompt, call_id: str) -> Reply:
        body = self.body(prompt)
        errors: list[str] = []
        sent_at = utc_now()
        headers = {CALL_ID_HEADER: call_id} if self.provider == "sim" else {}  # its stochastic replies' seed
        try:
            async for attempt in retrying(self.model.retry, self.errors, self.api.read_headers):
                with attempt:
                    sent, latency = await self._attempt(body, errors, headers)
        except Exception as exc:  # noqa: BLE001 - after the retries any failure is technical, never a crash
            status = self.errors.status_of(exc)
            message = f"{self.provider} {body['model']}: {describe(exc, self._secret, status)} (after {len(errors)} attempts)"
            reply = self._reply(body, text="", attempts=len(errors), attempt_errors=errors, stop_reason="error",
                                sent_at=sent_at)
            failure = Failure(kind=self.errors.kind(exc), detail=message, http_status=status or None)
            raise TechnicalFailure(failure, reply) from None
        return self.reply_of(body, sent, latency, errors, sent_at=sent_at)

    def reply_of(self, body: dict[str, Any], sent: Sent, latency: float, errors: list[str],  # free-form: request JSON
                 batched: bool = False, sent_at: datetime | None = None) -> Reply:
        """The reply to ``body`` from its successful attempt, answered now (its call sent at ``sent_at``); a
        batched call costs the batch price."""
        cost = cost_usd(sent.usage, self.model.price, self.input_includes_cache)
        return self._reply(
            body, text=sent.text, stop_reason=sent.stop_reason, usage=sent.usage, latency_s=latency,
            attempts=len(errors) + 1, attempt_errors=errors, request_id=sent.request_id,
            model_version=sent.model_version, served_by=sent.served_by, system_fingerprint=sent.system_fingerprint,
            cost_usd=self.model.price.charged(cost, batched), sent_at=sent_at, answered_at=utc_now(),
        )
