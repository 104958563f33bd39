"""Anthropic Message Batches (``client.messages.batches``): half price, results within 24 hours."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anthropic

from bargain_ray.clients.anthropic_messages import sent_of
from bargain_ray.clients.batches import BatchAPI, BatchResult, BatchRoute
from bargain_ray.clients.retry import retrying
from bargain_ray.config import Retry

if TYPE_CHECKING:
    from bargain_ray.clients.registry import API

READS = Retry(max_attempts=8, initial_s=0.5, max_s=30.0)
"""Reading a batch is free and safe to repeat; creating one is not, so ``create`` is tried once."""


class AnthropicBatches(BatchAPI):
    def __init__(self, route: BatchRoute, api: API) -> None:
        super().__init__(route, api)
        self.client = anthropic.AsyncAnthropic(
            api_key=route.api_key, base_url=route.base_url, max_retries=0, timeout=route.timeout_s,
        )

    async def _create(self, requests: dict[str, dict[str, Any]], intent: str) -> str:  # free-form: a request body, JSON as sent
        """Message Batches take no metadata: ``find`` knows the batch by its size, its time and its custom ids."""
        batch = await self.client.messages.batches.create(
            requests=[{"custom_id": custom_id, "params": body}  # type: ignore[typeddict-item]  # the body as sent
                      for custom_id, body in requests.items()],
        )
        return batch.id

    async def _find(self, intent: str, size: int, since: float) -> list[str]:
        """Every batch of ``size`` requests created since ``since`` (the list is newest first)."""
        found: list[str] = []
        async for attempt in retrying(READS, self.errors):
            with attempt:
                found.clear()
                async for batch in self.client.messages.batches.list(limit=100):
                    if batch.created_at.timestamp() < since:
                        break
                    if sum(batch.request_counts.model_dump().values()) == size:
                        found.append(batch.id)
        return found

    async def _ended(self, batch_id: str) -> bool:
        async for attempt in retrying(READS, self.errors):
            with attempt:
                batch = await self.client.messages.batches.retrieve(batch_id)
        return batch.processing_status == "ended"

    async def _results(self, batch_id: str) -> dict[str, BatchResult]:
        async for attempt in retrying(READS, self.errors):
            with attempt:
                out: dict[str, BatchResult] = {}
                async for line in await self.client.messages.batches.results(batch_id):
                    result = line.result
                    if result.type == "succeeded":
                        sent = sent_of(result.message, f"{batch_id}/{result.message.id}", {})
                        out[line.custom_id] = BatchResult(batch_id, sent=sent)
                    elif result.type == "errored":
                        error = result.error.error
                        out[line.custom_id] = BatchResult(batch_id, error=f"errored: {error.type}: {error.message}")
                    else:
                        out[line.custom_id] = BatchResult(batch_id, error=result.type)
        return out

    async def close(self) -> None:
        await self.client.close()
