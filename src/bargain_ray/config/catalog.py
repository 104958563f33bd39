"""What the config folders offer: each grid with its one-line description and unit count, as ``--help`` lists it, and
the model file of a model name."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from bargain_ray.config.compose import LOCAL, choices, compose_dict, conf_dir
from bargain_ray.config.errors import ConfigError
from bargain_ray.config.schema import GridConfig, ModelConfig

WIDTH = 90
"""Characters of a grid's description ``--help`` shows before it cuts it."""


def grid_file(name: str) -> Path:
    """The file ``+grid=<name>`` reads: ``./conf``'s, else the packaged one (``config.compose``: ./conf first)."""
    local = LOCAL / "grid" / f"{name}.yaml"
    return local if local.is_file() else conf_dir() / "grid" / f"{name}.yaml"


def description(path: Path) -> str:
    """The first sentence of the comment a grid file opens with (its ``@package`` line aside), cut to ``WIDTH``."""
    lines = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        if not line.startswith("#"):
            break
        if "@package" not in line:
            lines.append(line.lstrip("# ").strip())
    text = " ".join(lines).split(". ")[0].rstrip(".")
    if len(text) > WIDTH and ": " in text[:WIDTH]:
        text = text[: text.index(": ")]
    return text if len(text) <= WIDTH else text[: WIDTH - 1] + "…"


def unit_count(name: str) -> int:
    """Units of ``+grid=<name>`` as composed: blocks times the cells of each design."""
    grid = GridConfig.model_validate(compose_dict("config", [f"+grid={name}"])["grid"])
    return grid.blocks * sum(len(d.cell_labels()) for d in grid.designs)


def grid_lines() -> list[str]:
    """One line per grid: its name, its unit count (or why it does not compose) and its description."""
    names = choices("grid")
    width = max(map(len, names), default=0)
    out = []
    for name in names:
        try:
            units = f"{unit_count(name):>6} units"
        except (ConfigError, ValidationError, KeyError):
            units = "  (does not compose: run it to see why)"
        out.append(f"  {name:<{width}} {units}  {description(grid_file(name))}")
    return out


def model_named(name: str) -> ModelConfig | None:
    """The model ``conf/model`` configures under ``name`` (the first file whose ``name`` it is, ``./conf``'s first), None
    when no file names it: where a reader of a finished folder finds what its manifest leaves out (price, limits)."""
    for choice in choices("model"):
        try:
            data = compose_dict(f"model/{choice}")["model"]
        except (ConfigError, KeyError):
            continue
        if isinstance(data, dict) and data.get("name") == name:
            return ModelConfig.model_validate(data)
    return None
