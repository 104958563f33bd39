"""Model clients, one per configured model, shared by every game of a worker."""

from __future__ import annotations

from bargain_ray.clients.base import ModelClient
from bargain_ray.config import ModelConfig, ProviderConfig


class ClientPool:
    """Creates each model's client once per worker process."""

    def __init__(self, provider: ProviderConfig) -> None:
        self.provider = provider
        self._clients: dict[str, ModelClient] = {}

    def get(self, model: ModelConfig) -> ModelClient:
        key = model.model_dump_json()
        if key not in self._clients:
            raise NotImplementedError(f"no client for provider {model.provider!r} yet")
        return self._clients[key]

    async def close(self) -> None:
        """Close every client's HTTP connections."""
        for client in self._clients.values():
            await client.close()
        self._clients.clear()
