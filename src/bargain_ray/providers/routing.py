"""The ``provider=`` group typed, where ``provider=sim|local`` reroutes a model, which API and key each model
is called with, and whether it can go through a batch API.

Each choice of the group has its own model (``Provider``: default, sim, local, told apart by ``name``); the
composed ``provider`` block is read into it once, when the sweep is resolved (``design.resolved``), and
everything after reads the typed settings. A model's ``provider`` names an API of ``clients.registry`` (or
``strategy``); the registry's list is the only one.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Annotated, Literal, Protocol

from pydantic import Field

from bargain_ray.clients import registry
from bargain_ray.config import ModelConfig, Price, ProviderConfig, Strict
from bargain_ray.config.errors import nearest
from bargain_ray.config.schema import HUMAN, NO_API, STRATEGY
from bargain_ray.providers.local import LocalSettings
from bargain_ray.providers.sim.config import SimSettings

DEFAULT_API = "anthropic"
"""The API the simulated provider speaks to a model no setting names (a client built outside a sweep)."""
LOCAL_API = "openai_compatible"
"""The API of the bundled local model's server."""


class NoSettings(Strict):
    """``provider=default`` has no settings: each model keeps its own provider."""


class DefaultProvider(Strict):
    name: Literal["default"] = "default"
    settings: NoSettings = NoSettings()


class SimProvider(Strict):
    """Every LLM answered by the simulated provider, each through its own API's real SDK."""

    name: Literal["sim"] = "sim"
    settings: SimSettings = SimSettings()

    def api_of(self, model: ModelConfig) -> str:
        """The API the sim is spoken to for ``model`` (its own provider's, as the sweep resolved it)."""
        return self.settings.apis.get(model.name, DEFAULT_API)


class LocalProvider(Strict):
    """Every LLM played by the bundled local model, over its OpenAI-compatible server."""

    name: Literal["local"] = "local"
    settings: LocalSettings = LocalSettings()


Provider = Annotated[DefaultProvider | SimProvider | LocalProvider, Field(discriminator="name")]
"""The ``provider`` block of a resolved sweep."""

PROVIDERS: dict[str, type[DefaultProvider | SimProvider | LocalProvider]] = {
    "default": DefaultProvider, "sim": SimProvider, "local": LocalProvider}


def read_provider(raw: ProviderConfig, models: Mapping[str, ModelConfig]) -> Provider:
    """The composed ``provider`` block as its choice's model (raises ``ValidationError`` naming the key, or
    ``ValueError`` for a choice that does not exist); under ``provider=sim`` the settings name the API of
    every LLM (its own provider's, unless ``settings.apis`` says otherwise)."""
    cls = PROVIDERS.get(raw.name)
    if cls is None:
        raise ValueError(f"provider.name={raw.name}: no such provider; choose one of {', '.join(PROVIDERS)}")
    provider = cls.model_validate({"name": raw.name, "settings": raw.settings})
    if isinstance(provider, SimProvider):
        apis = {m.name: m.provider for m in models.values() if m.is_llm} | provider.settings.apis
        provider = provider.model_copy(update={"settings": provider.settings.model_copy(update={"apis": apis})})
    return provider


def api_of(model: ModelConfig, provider: Provider) -> str | None:
    """The API ``model`` (as this run calls it) is spoken to through; None for a strategy agent."""
    if not model.is_llm:
        return None
    if model.provider == "sim" and isinstance(provider, SimProvider):
        return provider.api_of(model)
    return LOCAL_API if model.provider == "local" else model.provider


def batch_api_of(model: ModelConfig, provider: Provider) -> str | None:
    """The API whose batch API ``model``'s requests could go through (the sim serves each API's own); None if
    its API has none."""
    api = api_of(model, provider)
    return api if api is not None and registry.get(api).batches is not None else None


def model_problems(models: Mapping[str, ModelConfig], provider: Provider) -> list[str]:
    """One line per model whose ``provider`` names no API, whose ``batch_api`` asks for a batch API its API does not
    have, or (under ``provider=sim``) whose API the simulated provider does not serve."""
    apis, problems = registry.names(), []
    for letter, model in models.items():
        if model.provider not in NO_API and model.provider not in apis:
            match = nearest(model.provider, [*apis, *NO_API])
            hint = f"did you mean provider={match}?" if match else f"the providers are {', '.join([*apis, *NO_API])}"
            problems.append(f"models.{letter}.provider={model.provider}: no such model API; {hint}")
        elif model.batch_api and model.is_llm and registry.get(model.provider).batches is None:
            having = [a for a in apis if registry.get(a).batches is not None]
            problems.append(f"models.{letter}.batch_api=true: the {model.provider} API has no batch API "
                            f"(these have one: {', '.join(having)})")
    if isinstance(provider, SimProvider):
        served = [a for a in apis if registry.get(a).sim_path is not None]
        letters = {m.name: letter for letter, m in models.items()}
        for name, api in provider.settings.apis.items():
            if api not in served:
                where = f"models.{letters[name]}.provider" if name in letters else f"provider.settings.apis.{name}"
                problems.append(f"{where}={api}: the simulated provider does not serve the {api} API (it serves "
                                f"{', '.join(served)}); run this model with provider=default, or give it one of those")
    return problems


def effective_model(model: ModelConfig, provider: Provider) -> ModelConfig:
    """``model`` as this run calls it: ``provider=sim|local`` reroutes every LLM.

    Under ``provider=local`` the model is the bundled one: its served name, free, no real provider's
    parameters, always the game's reply schema (without it a 135M model almost never writes valid JSON),
    output capped at what a reply needs and the prompt's KV cache kept. Decided here, once (when the sweep is
    resolved), so the fingerprint sees what the model is asked with and the client only sends it.
    """
    if provider.name == "default" or not model.is_llm:
        return model
    routed = model.model_copy(update={"provider": provider.name, "api_key_env": None, "base_url": None})
    return as_local(routed, provider.settings) if isinstance(provider, LocalProvider) else routed


def as_local(model: ModelConfig, local: LocalSettings) -> ModelConfig:
    """``model`` played by the bundled local model (see ``effective_model``)."""
    return model.model_copy(update={
        "name": local.name, "params": {"cache_prompt": local.cache_prompt}, "price": Price(),
        "structured_output": True,
        "max_tokens": min(model.max_tokens, local.max_tokens) if local.max_tokens else model.max_tokens,
    })


def key_env(model: ModelConfig, api: str) -> str | None:
    """The environment variable that holds the key for ``model`` on ``api``; None for a keyless server
    (``api_key_env: false``)."""
    if model.api_key_env is False:
        return None
    return model.api_key_env or (registry.get(api).key_env if api in registry.names() else None)


KEYLESS = ("sim", "local", STRATEGY, HUMAN)
"""Providers that never receive a real key (the sim and the local model get a placeholder)."""


class Routed(Protocol):
    """What the key functions read of a resolved sweep: each model as this run calls it."""

    @property
    def models(self) -> Mapping[str, ModelConfig]: ...


def key_names(sweep: Routed) -> list[str]:
    """The key variables the models read as this run calls them: none under ``provider=sim|local``."""
    names = {key_env(m, m.provider) for m in sweep.models.values() if m.provider not in KEYLESS}
    return sorted(n for n in names if n)


def key_env_vars(sweep: Routed) -> dict[str, str]:
    """The key variables the sweep's models read, as set here: handed to each worker as an actor argument
    (the object store, never a runtime env, a log or a record), so workers on any node have them."""
    return {n: os.environ[n] for n in key_names(sweep) if os.environ.get(n)}


def missing_keys(sweep: Routed) -> list[str]:
    """Environment variables the configured providers need but do not have."""
    return [n for n in key_names(sweep) if not os.environ.get(n)]
