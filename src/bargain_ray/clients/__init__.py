"""Model clients: one module per API, the limiter and retries. They know ``core.Prompt``, never a game.

``anthropic`` speaks the Messages API; ``openai`` and ``openai_compatible``
speak Chat Completions (the latter for any server by ``base_url``); ``anthropic_batches``
and ``openai_batches`` speak the two batch APIs (``batches``: what they share). Which API,
endpoint, key, limits and price a model gets is decided by ``providers``.
"""

from __future__ import annotations

from bargain_ray.clients.anthropic_batches import AnthropicBatches
from bargain_ray.clients.anthropic_messages import AnthropicClient
from bargain_ray.clients.base import ModelClient
from bargain_ray.clients.batches import BatchAPI, BatchedClient, BatchResult, BatchRoute
from bargain_ray.clients.http import HTTPClient
from bargain_ray.clients.openai_batches import OpenAIBatches
from bargain_ray.clients.openai_chat import OpenAIClient
from bargain_ray.config import ModelConfig

API_KEY_ENV = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY", "openai_compatible": "OPENAI_API_KEY"}
"""The key variable each API reads unless a model names its own ``api_key_env``."""


def http_client(model: ModelConfig, label: str, api: str, key: str, base_url: str | None) -> ModelClient:
    """The client of one API for ``model`` (``label`` is the provider recorded on each call)."""
    if api == "anthropic":
        return AnthropicClient(model, label, key, base_url)
    field = "max_completion_tokens" if api == "openai" else "max_tokens"
    return OpenAIClient(model, label, key, base_url, field)


def batch_client(route: BatchRoute) -> BatchAPI:
    """The batch API of ``route`` (Anthropic Message Batches, or OpenAI files + batches)."""
    return AnthropicBatches(route) if route.api == "anthropic" else OpenAIBatches(route)


__all__ = [
    "API_KEY_ENV", "AnthropicClient", "BatchAPI", "BatchResult", "BatchRoute", "BatchedClient", "HTTPClient",
    "ModelClient", "OpenAIClient", "batch_client", "http_client",
]
