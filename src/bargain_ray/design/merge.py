"""A game config as a condition plays it."""

from __future__ import annotations

from typing import Any

from bargain_ray.config import SweepConfig


def deep_merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in extra.items():
        out[k] = deep_merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def game_config(config: SweepConfig, game: str, condition: str) -> dict[str, Any]:
    """The game config as a condition plays it, as written: its YAML merged with the condition's overrides."""
    return deep_merge(config.games[game], config.conditions[condition].game)
