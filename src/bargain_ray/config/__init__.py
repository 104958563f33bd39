"""The configuration: pydantic models of the composed Hydra config, and the composition itself.

What a family or a provider reads (a game config, ``provider.settings``) is checked by its own schema when the
sweep is resolved (``design.resolved``), the one place a config is validated whole."""

from bargain_ray.config.base import Strict
from bargain_ray.config.compose import choices, compose_command, compose_dict, conf_dir, local_conf_note
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
