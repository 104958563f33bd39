"""Model clients: one module per API, the registry that names them, the limiter and retries. They know
``core.Prompt``, never a game.

``clients.registry`` holds every API a model may name as its ``provider`` (Anthropic Messages and Batches,
OpenAI Chat Completions and Batch, any OpenAI-compatible server by ``base_url``, and whatever another package
registers); ``batches`` is what the batch APIs share. Which API, endpoint, key, limits and price a model gets
is decided by ``providers``.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

from bargain_ray.clients import registry
from bargain_ray.clients.base import ModelClient
from bargain_ray.clients.registry import API, register
from bargain_ray.config import ModelConfig

if TYPE_CHECKING:
    from bargain_ray.clients.anthropic_messages import AnthropicClient
    from bargain_ray.clients.batches import BatchAPI, BatchedClient, BatchResult, BatchRoute
    from bargain_ray.clients.http import HTTPClient
    from bargain_ray.clients.openai_chat import CompatibleClient, OpenAIClient

_MODULE_OF = {
    "AnthropicClient": "anthropic_messages", "AnthropicBatches": "anthropic_batches", "BatchAPI": "batches",
    "BatchedClient": "batches", "BatchResult": "batches", "BatchRoute": "batches", "CompatibleClient": "openai_chat",
    "HTTPClient": "http", "OpenAIBatches": "openai_batches", "OpenAIClient": "openai_chat",
}


def __getattr__(name: str) -> object:
    """The SDK-backed classes load on first use: a process that only checks a config (``--help``, a refused
    value, a dry run) never imports ``anthropic`` or ``openai`` (2 s of a 3 s start)."""
    if name in _MODULE_OF:
        return getattr(import_module(f"bargain_ray.clients.{_MODULE_OF[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def http_client(model: ModelConfig, label: str, api: str, key: str, base_url: str | None) -> HTTPClient:
    """The client of API ``api`` for ``model`` (``label`` is the provider recorded on each call)."""
    return registry.get(api).make_client(model, label, key, base_url)


def batch_client(route: BatchRoute) -> BatchAPI:
    """The batch API of ``route`` (Anthropic Message Batches, OpenAI files + batches, or a registered one)."""
    return registry.get(route.api).make_batches(route)


__all__ = [
    "API", "AnthropicClient", "BatchAPI", "BatchResult", "BatchRoute", "BatchedClient", "CompatibleClient",
    "HTTPClient", "ModelClient", "OpenAIClient", "batch_client", "http_client", "register", "registry",
]
