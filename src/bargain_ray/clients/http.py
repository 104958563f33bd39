"""What every HTTP model client shares: limiter, retries, timing, usage, cost and the call record.

A provider module only says how to build the request body from a prompt and
how to send it and read the reply (``HTTPClient.body`` and ``HTTPClient.send``).
"""

from __future__ import annotations

import hashlib
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

from bargain_ray.clients.headers import CALL_ID_HEADER
from bargain_ray.clients.limiter import Feedback, Limiter
from bargain_ray.clients.retry import describe, headers_of, retrying, status_of
from bargain_ray.config import ModelConfig, Price
from bargain_ray.core.errors import TechnicalFailure
from bargain_ray.core.prompt import Prompt
from bargain_ray.core.records import Reply, Usage


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


def cost_usd(usage: Usage, price: Price, input_includes_cache: bool) -> float:
    """Dollars for one call from a per-million-token price table.

    OpenAI counts cached prompt tokens inside ``prompt_tokens``; Anthropic reports them apart.
    """
    fresh = usage.input_tokens - (usage.cache_read_tokens if input_includes_cache else 0)
    return (
        fresh * price.input
        + usage.output_tokens * price.output
        + usage.cache_read_tokens * price.cache_read
        + usage.cache_write_tokens * price.cache_write
    ) / 1e6


def estimate_tokens(body: dict[str, Any]) -> int:
    """Input tokens before the call (four characters a token), for the limiter's reservation."""
    chars = len(str(body.get("system", ""))) + sum(len(str(m.get("content", ""))) for m in body.get("messages", []))
    return max(1, chars // 4)


def limiter_key(provider: str, base_url: str | None, api_key: str, model: str) -> str:
    """(provider, hash of key and endpoint, model): the calls that share one provider limit."""
    digest = hashlib.sha256(f"{base_url or ''}\0{api_key}".encode()).hexdigest()[:12]
    return f"{provider}:{digest}:{model}"


class HTTPClient(ABC):
    """Complete a prompt through one provider API; retries and limits are applied here, once."""

    input_includes_cache = False
    batch_api: str | None = None
    """The batch API this client's requests can go through (``clients.batches``), None if none."""

    def __init__(self, model: ModelConfig, provider: str, api_key: str, base_url: str | None) -> None:
        self.model = model
        self.provider = provider
        self.base_url = base_url
        self._secret = api_key
        self.limiter = Limiter(limiter_key(provider, base_url, api_key, model.name), model.limits)

    @abstractmethod
    def body(self, prompt: Prompt) -> dict[str, Any]:
        """The request body exactly as sent (and recorded)."""

    @abstractmethod
    async def send(self, body: dict[str, Any], headers: dict[str, str]) -> Sent:
        """One attempt (``headers``: extra HTTP headers); raises the SDK's errors or MalformedReply."""

    @abstractmethod
    async def close(self) -> None:
        """Release the SDK's connections."""

    def _reply(self, body: dict[str, Any], **fields: Any) -> Reply:
        return Reply(provider=self.provider, model=body["model"], request=body, **fields)

    async def _attempt(self, body: dict[str, Any], errors: list[str], headers: dict[str, str]) -> tuple[Sent, float]:
        ticket = await self.limiter.acquire(estimate_tokens(body), self.model.max_tokens)
        start = time.monotonic()
        try:
            sent = await self.send(body, headers)
        except BaseException as exc:  # cancellation too: the slot must come back
            self.limiter.release(ticket, Feedback(status=status_of(exc), headers=headers_of(exc)))
            if isinstance(exc, Exception):
                errors.append(describe(exc, self._secret))
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
        headers = {CALL_ID_HEADER: call_id} if self.provider == "sim" else {}  # its stochastic replies' seed
        try:
            async for attempt in retrying(self.model.retry):
                with attempt:
                    sent, latency = await self._attempt(body, errors, headers)
        except Exception as exc:  # noqa: BLE001 - after the retries any failure is technical, never a crash
            message = f"{self.provider} {body['model']}: {describe(exc, self._secret)} (after {len(errors)} attempts)"
            reply = self._reply(body, text="", attempts=len(errors), attempt_errors=errors, stop_reason="error")
            raise TechnicalFailure(message, reply) from None
        return self.reply_of(body, sent, latency, errors)

    def reply_of(self, body: dict[str, Any], sent: Sent, latency: float, errors: list[str],
                 batched: bool = False) -> Reply:
        """The reply to ``body`` from its successful attempt; a batched call costs the batch price."""
        cost = cost_usd(sent.usage, self.model.price, self.input_includes_cache)
        return self._reply(
            body, text=sent.text, stop_reason=sent.stop_reason, usage=sent.usage, latency_s=latency,
            attempts=len(errors) + 1, attempt_errors=errors, request_id=sent.request_id,
            model_version=sent.model_version, served_by=sent.served_by,
            cost_usd=self.model.price.charged(cost, batched),
        )
