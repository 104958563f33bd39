"""The OpenAI Chat Completions client (``AsyncOpenAI``, SDK retries off, over the SDK's aiohttp transport), also for compatible servers."""

from __future__ import annotations

from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal
from typing import TYPE_CHECKING, Any

import openai
from openai.types.chat import ChatCompletion
from pydantic import ValidationError

from bargain_ray.clients.http import HTTPClient, Sent, validated
from bargain_ray.clients.retry import MalformedReply, SDKErrors, rate_headers
from bargain_ray.config import ModelConfig
from bargain_ray.core.prompt import Prompt
from bargain_ray.core.records import Usage

if TYPE_CHECKING:
    from bargain_ray.clients.registry import API

ERRORS = SDKErrors(status=(openai.APIStatusError,), connection=(openai.APIConnectionError,),
                   timeout=(openai.APITimeoutError,))
"""What the ``openai`` SDK raises, as retries and the summary read it (any server it talks to)."""


class OpenAIClient(HTTPClient):
    """OpenAI's own Chat Completions API, which takes ``max_completion_tokens``."""

    input_includes_cache = True
    max_tokens_field = "max_completion_tokens"

    def __init__(self, model: ModelConfig, provider: str, api_key: str, base_url: str | None, api: API) -> None:
        super().__init__(model, provider, api_key, base_url, api)
        self.client = openai.AsyncOpenAI(
            api_key=api_key, base_url=base_url, max_retries=0, timeout=model.retry.timeout_s,
            http_client=openai.DefaultAioHttpClient(),  # the SDK's own option: about half the CPU of httpx per call
        )

    def body(self, prompt: Prompt) -> dict[str, Any]:  # free-form: a request body, JSON as sent
        system = [{"role": "system", "content": prompt.system}] if prompt.system else []
        body: dict[str, Any] = {  # free-form: a request body, JSON as sent
            "model": self.model.name,
            "messages": [*system, *(m.model_dump() for m in prompt.messages)],
            self.max_tokens_field: self.model.max_tokens,
            **self.model.params,
        }
        if self.model.structured_output and prompt.json_schema:
            body["response_format"] = {"type": "json_schema", "json_schema": {"name": "reply", "schema": prompt.json_schema}}
        return body

    async def send(self, body: dict[str, Any], headers: dict[str, str]) -> Sent:  # free-form: a request body, JSON as sent
        # every other field goes through extra_body, so the SDK sends exactly what is recorded
        extra = {k: v for k, v in body.items() if k not in ("model", "messages")}
        raw = await self.client.chat.completions.with_raw_response.create(
            model=body["model"], messages=body["messages"], extra_body=extra, extra_headers=headers,
        )
        try:
            completion = validated(ChatCompletion, raw.content) or raw.parse()
            return sent_of(completion, raw.headers.get("x-request-id") or completion.id, rate_headers(raw.headers))
        except (ValueError, ValidationError, IndexError, TypeError) as exc:
            raise MalformedReply(f"unreadable response body: {str(exc)[:200]}") from None

    async def close(self) -> None:
        await self.client.close()



class CompatibleClient(OpenAIClient):
    """A server that speaks Chat Completions by ``base_url`` (OpenRouter, llama.cpp, vLLM): ``max_tokens``."""

    max_tokens_field = "max_tokens"


class LlamaCppClient(CompatibleClient):
    """llama.cpp's server (the bundled local model, ``provider=local``). Its grammar honours an integer's bounds
    but neither a number's bounds nor ``multipleOf``, so a number on a grid is sent as what it can hold exactly
    (``grid_for_llama_cpp``)."""

    def body(self, prompt: Prompt) -> dict[str, Any]:  # free-form: a request body, JSON as sent
        body = super().body(prompt)
        if "response_format" in body:
            body["response_format"]["json_schema"]["schema"] = grid_for_llama_cpp(prompt.json_schema)
        return body


MAX_LISTED = 1001
"""Values of a grid number llama.cpp is sent one by one (ours; each adds a branch its grammar follows per token)."""


def grid_for_llama_cpp(schema: Any) -> Any:  # free-form: a JSON Schema, sent to the provider as is
    """``schema`` with each number on a grid (``minimum``, ``maximum``, ``multipleOf``) as llama.cpp's grammar can
    hold it: the list of its values when there are at most ``MAX_LISTED``, else the whole numbers in its range
    (ours: a subset of the grid, so still only legal values)."""
    if isinstance(schema, list):
        return [grid_for_llama_cpp(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    if schema.get("type") == "number" and {"minimum", "maximum", "multipleOf"} <= schema.keys():
        low, high, step = (Decimal(str(schema[k])) for k in ("minimum", "maximum", "multipleOf"))
        first, last = (low / step).to_integral_value(ROUND_CEILING), (high / step).to_integral_value(ROUND_FLOOR)
        if last - first < MAX_LISTED:
            return {"enum": [float(k * step) for k in range(int(first), int(last) + 1)]}
        return {"type": "integer", "minimum": int(low.to_integral_value(ROUND_CEILING)),
                "maximum": int(high.to_integral_value(ROUND_FLOOR))}
    return {key: grid_for_llama_cpp(value) for key, value in schema.items()}


def sent_of(completion: ChatCompletion, request_id: str | None, headers: dict[str, str]) -> Sent:
    """A Chat Completions reply as the runner keeps it, online or from a batch."""
    choice = completion.choices[0]
    message = choice.message
    usage = completion.usage
    prompt_details = getattr(usage, "prompt_tokens_details", None)
    completion_details = getattr(usage, "completion_tokens_details", None)
    return Sent(
        text=message.content or message.refusal or "",
        stop_reason="refusal" if message.refusal else choice.finish_reason,
        usage=Usage(
            input_tokens=usage.prompt_tokens if usage else 0,
            output_tokens=usage.completion_tokens if usage else 0,
            cache_read_tokens=getattr(prompt_details, "cached_tokens", 0) or 0,
            reasoning_tokens=getattr(completion_details, "reasoning_tokens", 0) or 0,
        ),
        request_id=request_id,
        model_version=completion.model,
        headers=headers,
        served_by=served_by(completion),
        system_fingerprint=completion.system_fingerprint or None,
    )


def served_by(completion: ChatCompletion) -> str | None:
    """The upstream provider that answered, as a router names it: OpenRouter's top-level ``provider``
    field (e.g. "Anthropic", "Together"), kept by the SDK among the fields it does not model.
    OpenAI itself and most compatible servers send none (None)."""
    name = (completion.model_extra or {}).get("provider")
    return name if isinstance(name, str) and name else None
