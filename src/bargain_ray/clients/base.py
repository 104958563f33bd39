"""What a model client does: complete a prompt into a reply. It knows nothing of games."""

from __future__ import annotations

from typing import Protocol

from bargain_ray.config import ModelConfig
from bargain_ray.core.prompt import Prompt
from bargain_ray.core.records import Reply


class ModelClient(Protocol):
    async def complete(self, prompt: Prompt, call_id: str) -> Reply:
        """The reply, with usage, timing and attempts; raises TechnicalFailure after retries."""
        ...

    async def close(self) -> None:
        """Release connections."""
        ...


class ClientSource(Protocol):
    """Where an agent gets its model's client (the providers' ``ClientPool``): agents need only this, not who
    routes a model to an API."""

    def get(self, model: ModelConfig) -> ModelClient:
        """The client of ``model``, shared by every agent of that model."""
        ...
