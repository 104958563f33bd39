"""Finding and composing the Hydra configs under ``conf/``."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf


def conf_dir() -> Path:
    """``conf/`` of the checkout (or ``BARGAIN_RAY_CONF``), where every YAML lives."""
    env = os.environ.get("BARGAIN_RAY_CONF")
    return Path(env) if env else Path(__file__).resolve().parents[2] / "conf"


def compose_dict(config_name: str, overrides: list[str] | tuple[str, ...] = ()) -> dict[str, Any]:
    """Compose one config with overrides, as a plain resolved dict."""
    with initialize_config_dir(config_dir=str(conf_dir()), version_base="1.3"):
        cfg = compose(config_name=config_name, overrides=list(overrides))
    data = OmegaConf.to_container(cfg, resolve=True)
    data.pop("hydra", None)
    return data
