"""Where ``provider=sim|local`` reroutes a model, and which key variable each model reads."""

from __future__ import annotations

import os

from bargain_ray.clients import API_KEY_ENV
from bargain_ray.config import ModelConfig, Price, SweepConfig
from bargain_ray.providers.local import LocalSettings


def effective_model(sweep: SweepConfig, letter: str) -> ModelConfig:
    """A model as this run calls it: ``provider=sim|local`` reroutes every LLM.

    Under ``provider=local`` the model is the bundled one: its served name, free, no real provider's
    parameters, always the game's reply schema (without it a 135M model almost never writes valid JSON),
    output capped at what a reply needs and the prompt's KV cache kept. Decided here, once, so the
    fingerprint sees what the model is asked with and the client only sends it.
    """
    model = sweep.models[letter]
    if sweep.provider.name == "default" or not model.is_llm:
        return model
    routed = model.model_copy(update={"provider": sweep.provider.name, "api_key_env": None, "base_url": None})
    if sweep.provider.name != "local":
        return routed
    return as_local(routed, LocalSettings.model_validate(sweep.provider.settings))


def as_local(model: ModelConfig, local: LocalSettings) -> ModelConfig:
    """``model`` played by the bundled local model (see ``effective_model``)."""
    return model.model_copy(update={
        "name": local.name, "params": {"cache_prompt": local.cache_prompt}, "price": Price(),
        "structured_output": True,
        "max_tokens": min(model.max_tokens, local.max_tokens) if local.max_tokens else model.max_tokens,
    })


def key_env(model: ModelConfig, api: str) -> str | None:
    """The environment variable that holds the key for ``model`` on ``api``."""
    return model.api_key_env or API_KEY_ENV.get(api)


KEYLESS = ("sim", "local", "strategy")
"""Providers that never receive a real key (the sim and the local model get a placeholder)."""


def key_names(sweep: SweepConfig) -> list[str]:
    """The key variables the models read as this run calls them: none under ``provider=sim|local``."""
    names = set()
    for letter in sweep.models:
        model = effective_model(sweep, letter)
        if model.provider not in KEYLESS:
            names.add(key_env(model, model.provider))
    return sorted(n for n in names if n)


def key_env_vars(sweep: SweepConfig) -> dict[str, str]:
    """The key variables the sweep's models read, as set here: handed to each worker as an actor argument
    (the object store, never a runtime env, a log or a record), so workers on any node have them."""
    return {n: os.environ[n] for n in key_names(sweep) if os.environ.get(n)}


def missing_keys(sweep: SweepConfig) -> list[str]:
    """Environment variables the configured providers need but do not have."""
    return [n for n in key_names(sweep) if not os.environ.get(n)]
