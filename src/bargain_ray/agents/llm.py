"""An LLM agent: the game's prompt sent through a model client."""

from __future__ import annotations

from bargain_ray.clients.base import ModelClient
from bargain_ray.core.prompt import Prompt
from bargain_ray.core.records import Reply


class LLMAgent:
    def __init__(self, client: ModelClient) -> None:
        self.client = client

    async def act(self, prompt: Prompt, call_id: str) -> Reply:
        return await self.client.complete(prompt, call_id)
