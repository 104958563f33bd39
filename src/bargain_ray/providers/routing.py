"""Where ``provider=sim|local`` reroutes a model, and which key variable each model reads."""

from __future__ import annotations

import os

from bargain_ray.clients import API_KEY_ENV
from bargain_ray.config import ModelConfig, SweepConfig


def effective_model(sweep: SweepConfig, letter: str) -> ModelConfig:
    """A model as this run calls it: ``provider=sim|local`` reroutes every LLM."""
    model = sweep.models[letter]
    if sweep.provider.name != "default" and model.is_llm:
        return model.model_copy(update={"provider": sweep.provider.name, "api_key_env": None, "base_url": None})
    return model


def key_env(model: ModelConfig, api: str) -> str | None:
    """The environment variable that holds the key for ``model`` on ``api``."""
    return model.api_key_env or API_KEY_ENV.get(api)


def key_env_vars(sweep: SweepConfig) -> dict[str, str]:
    """The key variables the sweep's models read, as set here: handed to each worker as an actor argument
    (the object store, never a runtime env, a log or a record), so workers on any node have them."""
    names = {key_env(m, m.provider) for m in sweep.models.values() if m.is_llm}
    return {n: os.environ[n] for n in sorted(n for n in names if n) if os.environ.get(n)}


def missing_keys(sweep: SweepConfig) -> list[str]:
    """Environment variables the configured providers need but do not have."""
    missing = []
    for letter in sorted(sweep.models):
        model = effective_model(sweep, letter)
        env = key_env(model, model.provider) if model.provider not in ("sim", "local", "strategy") else None
        if env and not os.environ.get(env) and env not in missing:
            missing.append(env)
    return missing
