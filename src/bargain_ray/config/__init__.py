"""The configuration: pydantic models of the composed Hydra config, and the composition itself."""

from bargain_ray.config.compose import choices, compose_command, compose_dict, conf_dir, load_config, user_conf
from bargain_ray.config.schema import (
    RUNTIME_KEYS,
    Assignment,
    BatchRun,
    Condition,
    Design,
    GridConfig,
    Limits,
    ModelConfig,
    Price,
    ProviderConfig,
    Rates,
    Retry,
    RunConfig,
    Strict,
    SweepConfig,
)

__all__ = [
    "RUNTIME_KEYS", "Assignment", "BatchRun", "Condition", "Design", "GridConfig", "Limits", "ModelConfig", "Price",
    "ProviderConfig", "Rates", "Retry", "RunConfig", "Strict", "SweepConfig", "choices", "compose_command",
    "compose_dict", "conf_dir", "load_config", "user_conf",
]
