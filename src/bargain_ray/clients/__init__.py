"""Model clients, one per configured model, shared by every game of a worker.

A model's ``provider`` picks the API: ``anthropic`` (Messages), ``openai`` and
``openai_compatible`` (Chat Completions, the latter for any server by
``base_url``). ``provider=sim`` and ``provider=local`` reroute every model:
to the simulated provider (each model keeps the API of its own provider) or
to the bundled local model's OpenAI-compatible server.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from bargain_ray.clients.anthropic_messages import AnthropicClient
from bargain_ray.clients.base import ModelClient, Reply, TechnicalFailure
from bargain_ray.clients.openai_chat import OpenAIClient
from bargain_ray.config import Limits, ModelConfig, Price, ProviderConfig, Rates, SweepConfig
from bargain_ray.games.base import Prompt

KEY_ENV = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY", "openai_compatible": "OPENAI_API_KEY"}
NO_KEY = "no-key"
"""What is sent to the simulated provider or the local model when no key is set."""


def key_env(model: ModelConfig, api: str) -> str | None:
    """The environment variable that holds the key for ``model`` on ``api``."""
    return model.api_key_env or KEY_ENV.get(api)


def key_env_vars(sweep: SweepConfig) -> dict[str, str]:
    """The key variables the sweep's models read, as set here: handed to each worker as an actor argument
    (the object store, never a runtime env, a log or a record), so workers on any node have them."""
    names = {key_env(m, m.provider) for m in sweep.models.values() if m.is_llm}
    return {n: os.environ[n] for n in sorted(n for n in names if n) if os.environ.get(n)}


class MissingKey:
    """Stands in for a client whose key is not in this worker's environment: every call fails technically."""

    def __init__(self, model: ModelConfig, env: str | None) -> None:
        self.model = model
        self.env = env

    async def complete(self, prompt: Prompt, call_id: str) -> Reply:
        raise TechnicalFailure(f"{self.env or 'an API key'} is not set in this worker's environment "
                               f"({self.model.provider} {self.model.name})")

    async def close(self) -> None:
        return None


def _http_client(model: ModelConfig, label: str, api: str, key: str, base_url: str | None) -> ModelClient:
    if api == "anthropic":
        return AnthropicClient(model, label, key, base_url)
    field = "max_completion_tokens" if api == "openai" else "max_tokens"
    return OpenAIClient(model, label, key, base_url, field)


def make_client(model: ModelConfig, provider: ProviderConfig, keys: Mapping[str, str] | None = None) -> ModelClient:
    """The client for one model as this run calls it (``provider`` holds the sim's or local model's address).

    ``keys`` are the key variables the driver handed this worker; by default this process's environment.
    """
    settings: dict[str, Any] = provider.settings
    keys = os.environ if keys is None else keys
    if model.provider == "sim":
        api = settings.get("apis", {}).get(model.name, "anthropic")
        base = settings["base_url"]
        key = keys.get(key_env(model, api) or "") or NO_KEY
        # the sim is the provider here: its limits are the ones to pace by, not the real provider's
        served = {k: v for k, v in settings.get("limits", {}).items() if k in Rates.model_fields}
        model = model.model_copy(update={"limits": Limits(**served, max_in_flight=model.limits.max_in_flight)})
        return _http_client(model, "sim", api, key, base if api == "anthropic" else f"{base}/v1")
    if model.provider == "local":
        # the local model is free and knows none of the real provider's parameters; it always
        # gets the game's reply schema, without which a 135M model almost never writes valid JSON
        served = model.model_copy(update={"name": settings["name"], "params": {}, "price": Price(),
                                          "structured_output": True})
        return _http_client(served, "local", "openai_compatible", NO_KEY, settings["base_url"])
    env = key_env(model, model.provider)
    key = keys.get(env or "")
    if not key:
        return MissingKey(model, env)
    return _http_client(model, model.provider, model.provider, key, model.base_url)


class ClientPool:
    """Creates each model's client once per worker process."""

    def __init__(self, provider: ProviderConfig, keys: Mapping[str, str] | None = None) -> None:
        self.provider = provider
        self.keys = keys
        self._clients: dict[str, ModelClient] = {}

    def get(self, model: ModelConfig) -> ModelClient:
        key = model.model_dump_json()
        if key not in self._clients:
            self._clients[key] = make_client(model, self.provider, self.keys)
        return self._clients[key]

    async def close(self) -> None:
        """Close every client's HTTP connections."""
        for client in self._clients.values():
            await client.close()
        self._clients.clear()
