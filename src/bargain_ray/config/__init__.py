"""The configuration: pydantic models of the composed Hydra config, and the composition itself.

What a family or a provider reads (a game config, ``provider.settings``) is checked by its own schema when the
sweep is resolved (``design.resolved``), the one place a config is validated whole.

The composition's names are imported on first use: it loads Hydra, which a process that only reads configs (every
Ray actor) never needs."""

from __future__ import annotations

import importlib
from typing import Any

from bargain_ray.config.base import Strict
from bargain_ray.config.pricing import Price
from bargain_ray.config.schema import (
    RUNTIME_KEYS,
    Assignment,
    BatchRun,
    Condition,
    Design,
    GridConfig,
    Limits,
    LocalFile,
    ModelConfig,
    ProviderConfig,
    Rates,
    Retry,
    RunConfig,
    SweepConfig,
)

__all__ = [
    "RUNTIME_KEYS", "Assignment", "BatchRun", "Condition", "Design", "GridConfig", "Limits", "LocalFile", "ModelConfig", "Price",
    "ProviderConfig", "Rates", "Retry", "RunConfig", "Strict", "SweepConfig", "choices", "compose_command",
    "compose_dict", "conf_dir", "local_conf_note",
]

_COMPOSE = ("choices", "compose_command", "compose_dict", "conf_dir", "local_conf_note")


def __getattr__(name: str) -> Any:
    if name in _COMPOSE:
        return getattr(importlib.import_module("bargain_ray.config.compose"), name)
    raise AttributeError(f"module 'bargain_ray.config' has no attribute {name!r}")
