"""Model clients: one module per API, the limiter and retries. They know ``core.Prompt``, never a game.

``anthropic`` speaks the Messages API; ``openai`` and ``openai_compatible``
speak Chat Completions (the latter for any server by ``base_url``); ``anthropic_batches``
and ``openai_batches`` speak the two batch APIs (``batches``: what they share). Which API,
endpoint, key, limits and price a model gets is decided by ``providers``.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

from bargain_ray.clients.base import ModelClient
from bargain_ray.config import ModelConfig

if TYPE_CHECKING:
    from bargain_ray.clients.anthropic_messages import AnthropicClient
    from bargain_ray.clients.batches import BatchAPI, BatchedClient, BatchResult, BatchRoute
    from bargain_ray.clients.http import HTTPClient
    from bargain_ray.clients.openai_chat import OpenAIClient

_MODULE_OF = {
    "AnthropicClient": "anthropic_messages", "AnthropicBatches": "anthropic_batches", "BatchAPI": "batches",
    "BatchedClient": "batches", "BatchResult": "batches", "BatchRoute": "batches", "HTTPClient": "http",
    "OpenAIBatches": "openai_batches", "OpenAIClient": "openai_chat",
}


def __getattr__(name: str) -> object:
    """The SDK-backed classes load on first use: a process that only checks a config (``--help``, a refused
    value, a dry run) never imports ``anthropic`` or ``openai`` (2 s of a 3 s start)."""
    if name in _MODULE_OF:
        return getattr(import_module(f"bargain_ray.clients.{_MODULE_OF[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


API_KEY_ENV = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY", "openai_compatible": "OPENAI_API_KEY"}
"""The key variable each API reads unless a model names its own ``api_key_env``."""


def http_client(model: ModelConfig, label: str, api: str, key: str, base_url: str | None) -> ModelClient:
    """The client of one API for ``model`` (``label`` is the provider recorded on each call)."""
    if api == "anthropic":
        from bargain_ray.clients.anthropic_messages import AnthropicClient

        return AnthropicClient(model, label, key, base_url)
    from bargain_ray.clients.openai_chat import OpenAIClient

    field = "max_completion_tokens" if api == "openai" else "max_tokens"
    return OpenAIClient(model, label, key, base_url, field)


def batch_client(route: BatchRoute) -> BatchAPI:
    """The batch API of ``route`` (Anthropic Message Batches, or OpenAI files + batches)."""
    if route.api == "anthropic":
        from bargain_ray.clients.anthropic_batches import AnthropicBatches

        return AnthropicBatches(route)
    from bargain_ray.clients.openai_batches import OpenAIBatches

    return OpenAIBatches(route)


__all__ = [
    "API_KEY_ENV", "AnthropicClient", "BatchAPI", "BatchResult", "BatchRoute", "BatchedClient", "HTTPClient",
    "ModelClient", "OpenAIClient", "batch_client", "http_client",
]
