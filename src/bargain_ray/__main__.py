"""``python -m bargain_ray +grid=NAME [overrides]``: run or resume a sweep."""

from __future__ import annotations

import sys

import hydra
from omegaconf import DictConfig, OmegaConf
from pydantic import ValidationError

from bargain_ray.config import SweepConfig, conf_dir, user_conf
from bargain_ray.execution.sweep import run_sweep
from bargain_ray.store import ChangedConfig


def validate(cfg: DictConfig) -> SweepConfig:
    data = OmegaConf.to_container(cfg, resolve=True)
    data.pop("hydra", None)
    if "grid" not in data:
        raise SystemExit("error: no grid chosen; run e.g. `python -m bargain_ray +grid=demo` (grids are in conf/grid/)")
    try:
        return SweepConfig.model_validate(data)
    except ValidationError as exc:
        raise SystemExit(f"error: invalid config, nothing was run:\n{exc}") from None


@hydra.main(config_path=str(conf_dir()), config_name="config", version_base="1.3")
def main(cfg: DictConfig) -> None:
    sweep = validate(cfg)
    try:  # SIGINT/SIGTERM stop the sweep like Ctrl-C (execution.signals): exit 130/143 with the tables written
        code = run_sweep(sweep)
    except ChangedConfig as exc:
        raise SystemExit(f"error: {exc}") from None
    if code:
        sys.exit(code)


if __name__ == "__main__":
    sys.argv[1:1] = user_conf()
    main()
