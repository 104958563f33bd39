"""A model as this run calls it, resolved once into a client: real API, simulated provider or local model."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping

from bargain_ray.clients import ModelClient, registry
from bargain_ray.config import Limits, ModelConfig, Rates
from bargain_ray.core.errors import Failure, FailureKind, TechnicalFailure
from bargain_ray.core.prompt import Prompt
from bargain_ray.core.records import Reply
from bargain_ray.providers.routing import LOCAL_API, LocalProvider, Provider, SimProvider, key_env

NO_KEY = "no-key"
"""The only credential the simulated provider and the local model ever receive: they are not the real
provider, so a real key set in the environment is never sent to them (the sim may run on another host)."""


class MissingKey:
    """Stands in for a client whose key is not in this worker's environment: every call fails technically."""

    def __init__(self, model: ModelConfig, env: str | None) -> None:
        self.model = model
        self.env = env

    async def complete(self, prompt: Prompt, call_id: str) -> Reply:
        raise TechnicalFailure(Failure(
            kind=FailureKind.MISSING_KEY,
            detail=f"{self.env or 'an API key'} is not set in this worker's environment "
                   f"({self.model.provider} {self.model.name})"))

    async def close(self) -> None:
        return None


def make_client(model: ModelConfig, provider: Provider, keys: Mapping[str, str] | None = None) -> ModelClient:
    """The client for one model as this run calls it (``provider`` holds the sim's or local model's address).

    ``keys`` are the key variables the driver handed this worker; by default this process's environment.
    """
    keys = os.environ if keys is None else keys
    if model.provider == "sim" and isinstance(provider, SimProvider):
        api = registry.get(provider.api_of(model))
        if api.sim_path is None:
            raise ValueError(f"the simulated provider does not serve the {api.name} API")
        # the sim is the provider here: its limits are the ones to pace by, not the real provider's
        served = provider.settings.limits.model_dump(include=set(Rates.model_fields))
        model = model.model_copy(update={"limits": Limits(**served, max_in_flight=model.limits.max_in_flight)})
        return api.make_client(model, "sim", NO_KEY, f"{provider.settings.base_url}{api.sim_path}")
    if model.provider == "local" and isinstance(provider, LocalProvider):  # already the bundled model (effective_model)
        from bargain_ray.clients.openai_chat import LlamaCppClient  # the SDK is loaded only when a client is made
        return LlamaCppClient(model, "local", NO_KEY, provider.settings.base_url, registry.get(LOCAL_API))
    env = key_env(model, model.provider)
    key = NO_KEY if model.api_key_env is False else keys.get(env or "")
    if not key:
        return MissingKey(model, env)
    return registry.get(model.provider).make_client(model, model.provider, key, model.base_url)


class ClientPool:
    """Creates each model's client once per worker process; ``wrap`` may put it behind another (the batcher)."""

    def __init__(self, provider: Provider, keys: Mapping[str, str] | None = None,
                 wrap: Callable[[ModelConfig, ModelClient], ModelClient] | None = None) -> None:
        self.provider = provider
        self.keys = keys
        self.wrap = wrap
        self._clients: dict[str, ModelClient] = {}

    def get(self, model: ModelConfig) -> ModelClient:
        key = model.model_dump_json()
        if key not in self._clients:
            client = make_client(model, self.provider, self.keys)
            self._clients[key] = self.wrap(model, client) if self.wrap else client
        return self._clients[key]

    async def close(self) -> None:
        """Close every client's HTTP connections."""
        for client in self._clients.values():
            await client.close()
        self._clients.clear()
