"""OpenAI's Batch API: a JSONL file of Chat Completions requests, one batch, output and error files."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final

import openai
from openai.types.chat import ChatCompletion

from bargain_ray.clients.batches import INTENT_KEY, BatchAPI, BatchResult, BatchRoute
from bargain_ray.clients.openai_chat import sent_of
from bargain_ray.clients.retry import retrying
from bargain_ray.config import Retry

if TYPE_CHECKING:
    from bargain_ray.clients.registry import API

ENDPOINT: Final = "/v1/chat/completions"
READS = Retry(max_attempts=8, initial_s=0.5, max_s=30.0)
"""Reading a batch is free and safe to repeat; creating one is not, so ``create`` is tried once."""
ENDED = ("completed", "failed", "expired", "cancelled")


class OpenAIBatches(BatchAPI):
    def __init__(self, route: BatchRoute, api: API) -> None:
        super().__init__(route, api)
        self.client = openai.AsyncOpenAI(
            api_key=route.api_key, base_url=route.base_url, max_retries=0, timeout=route.timeout_s,
        )

    async def _create(self, requests: dict[str, dict[str, Any]], intent: str) -> str:  # free-form: a request body, JSON as sent
        lines = [{"custom_id": custom_id, "method": "POST", "url": ENDPOINT, "body": body}
                 for custom_id, body in requests.items()]
        data = "".join(json.dumps(line) + "\n" for line in lines).encode()
        file = await self.client.files.create(file=("batch.jsonl", data), purpose="batch")
        batch = await self.client.batches.create(input_file_id=file.id, endpoint=ENDPOINT, completion_window="24h",
                                                 metadata={INTENT_KEY: intent})
        return batch.id

    async def _find(self, intent: str, size: int, since: float) -> list[str]:
        """The batch whose metadata carries ``intent`` (the list is newest first: read until older than ``since``)."""
        async for attempt in retrying(READS, self.errors):
            with attempt:
                async for batch in self.client.batches.list(limit=100):
                    if batch.created_at < since:
                        return []
                    if (batch.metadata or {}).get(INTENT_KEY) == intent:
                        return [batch.id]
        return []

    async def _ended(self, batch_id: str) -> bool:
        async for attempt in retrying(READS, self.errors):
            with attempt:
                batch = await self.client.batches.retrieve(batch_id)
        return batch.status in ENDED

    async def _results(self, batch_id: str) -> dict[str, BatchResult]:
        """Successes from the output file, failures from the error file; a request in neither failed too."""
        async for attempt in retrying(READS, self.errors):
            with attempt:
                batch = await self.client.batches.retrieve(batch_id)
                out: dict[str, BatchResult] = {}
                for file_id in (batch.output_file_id, batch.error_file_id):
                    if file_id:
                        content = await self.client.files.content(file_id)
                        for raw in content.text.splitlines():
                            if raw.strip():
                                custom_id, result = _result(batch_id, json.loads(raw))
                                out[custom_id] = result
        return out

    async def close(self) -> None:
        await self.client.close()


def _result(batch_id: str, line: dict[str, Any]) -> tuple[str, BatchResult]:  # free-form: a result line, JSON as received
    response, error = line.get("response"), line.get("error")
    if response and response.get("status_code") == 200:
        completion = ChatCompletion.model_validate(response["body"])
        request_id = f"{batch_id}/{response.get('request_id') or completion.id}"
        return line["custom_id"], BatchResult(batch_id, sent=sent_of(completion, request_id, {}))
    if error:
        return line["custom_id"], BatchResult(batch_id, error=f"{error.get('code')}: {error.get('message')}")
    status = response.get("status_code") if response else None
    return line["custom_id"], BatchResult(batch_id, error=f"errored: HTTP {status}")
