"""Finding and composing the Hydra configs under ``conf/``."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from bargain_ray.config.schema import SweepConfig


def conf_dir() -> Path:
    """``bargain_ray/conf/``, shipped inside the package (or ``BARGAIN_RAY_CONF``), where every YAML lives."""
    env = os.environ.get("BARGAIN_RAY_CONF")
    return Path(env) if env else Path(__file__).resolve().parents[1] / "conf"


def user_conf() -> list[str]:
    """The override that lets a ``conf/`` folder in the working directory extend the packaged one
    (its grids, games, models, ...), through Hydra's search path; none when there is no such folder."""
    folder = Path("conf").resolve()
    if not folder.is_dir() or folder == conf_dir().resolve():
        return []
    return [f"hydra.searchpath=[file://{folder}]"]


def compose_dict(config_name: str, overrides: list[str] | tuple[str, ...] = ()) -> dict[str, Any]:
    """Compose one config with overrides, as a plain resolved dict."""
    with initialize_config_dir(config_dir=str(conf_dir()), version_base="1.3"):
        cfg = compose(config_name=config_name, overrides=[*user_conf(), *overrides])
    data = OmegaConf.to_container(cfg, resolve=True)
    data.pop("hydra", None)
    return data


def load_config(grid: str, overrides: list[str] | tuple[str, ...] = ()) -> SweepConfig:
    """The validated config of ``+grid=<grid>`` with Hydra ``overrides``, as the command line composes it."""
    return SweepConfig.model_validate(compose_dict("config", [f"+grid={grid}", *overrides]))
