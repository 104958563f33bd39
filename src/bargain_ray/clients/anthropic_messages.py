"""The Anthropic Messages API client (``AsyncAnthropic``, SDK retries off, over the SDK's aiohttp transport)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anthropic
from anthropic.types import Message
from pydantic import ValidationError

from bargain_ray.clients.http import HTTPClient, Sent, validated
from bargain_ray.clients.retry import MalformedReply, SDKErrors, rate_headers
from bargain_ray.config import ModelConfig
from bargain_ray.core.prompt import Prompt
from bargain_ray.core.records import Usage

if TYPE_CHECKING:
    from bargain_ray.clients.registry import API

SENT_AS_ARGS = ("model", "messages", "max_tokens")

ERRORS = SDKErrors(status=(anthropic.APIStatusError,), connection=(anthropic.APIConnectionError,),
                   timeout=(anthropic.APITimeoutError,))
"""What the ``anthropic`` SDK raises, as retries and the summary read it (the Messages and Batches APIs alike)."""


class AnthropicClient(HTTPClient):
    def __init__(self, model: ModelConfig, provider: str, api_key: str, base_url: str | None, api: API) -> None:
        super().__init__(model, provider, api_key, base_url, api)
        self.client = anthropic.AsyncAnthropic(
            api_key=api_key, base_url=base_url, max_retries=0, timeout=model.retry.timeout_s,
            http_client=anthropic.DefaultAioHttpClient(),  # the SDK's own option: about half the CPU of httpx per call
        )

    def body(self, prompt: Prompt) -> dict[str, Any]:  # free-form: a request body, JSON as sent
        """Seed 000's request shape: model, system, messages, max_tokens, then the configured params."""
        body: dict[str, Any] = {  # free-form: a request body, JSON as sent
            "model": self.model.name,
            "system": prompt.system,
            "messages": [m.model_dump() for m in prompt.messages],
            "max_tokens": self.model.max_tokens,
            **self.model.params,
        }
        if self.model.structured_output and prompt.json_schema:
            # the SDK's own conversion: what the API does not constrain (bounds, lengths) becomes the description
            fmt = {"type": "json_schema", "schema": anthropic.transform_schema(prompt.json_schema)}
            body["output_config"] = {**body.get("output_config", {}), "format": fmt}
        return body

    async def send(self, body: dict[str, Any], headers: dict[str, str]) -> Sent:  # free-form: a request body, JSON as sent
        # every other field goes through extra_body, so the SDK sends exactly what is recorded
        extra = {k: v for k, v in body.items() if k not in SENT_AS_ARGS}
        raw = await self.client.messages.with_raw_response.create(
            model=body["model"], messages=body["messages"], max_tokens=body["max_tokens"], extra_body=extra,
            extra_headers=headers,
        )
        try:
            msg = validated(Message, await raw.read()) or await raw.parse()
            return sent_of(msg, raw.headers.get("request-id") or msg.id, rate_headers(raw.headers))
        except (ValueError, ValidationError, TypeError) as exc:
            raise MalformedReply(f"unreadable response body: {str(exc)[:200]}") from None

    async def close(self) -> None:
        await self.client.close()


def sent_of(msg: Message, request_id: str | None, headers: dict[str, str]) -> Sent:
    """A Messages API reply as the runner keeps it, online or from a batch."""
    usage = msg.usage
    details = getattr(usage, "output_tokens_details", None)
    return Sent(
        text="".join(b.text for b in msg.content if b.type == "text"),
        stop_reason=msg.stop_reason,
        usage=Usage(
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cache_read_tokens=usage.cache_read_input_tokens or 0,
            cache_write_tokens=usage.cache_creation_input_tokens or 0,
            reasoning_tokens=getattr(details, "thinking_tokens", 0) or 0,
        ),
        request_id=request_id,
        model_version=msg.model,
        headers=headers,
    )
