"""The design: the sweep resolved once, a grid expanded into units, the fingerprint a resume compares, the
dry-run estimate.

The resolver's names load its module on first use, so a reader of a finished folder that only needs the
fingerprint's names (``game_part``) never imports the providers the resolver reads.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

from bargain_ray.design.estimate import estimate
from bargain_ray.design.fingerprint import game_key, game_part
from bargain_ray.design.merge import deep_merge, game_config
from bargain_ray.design.units import units

if TYPE_CHECKING:
    from bargain_ray.design.resolved import GameConfig, ResolvedSweep, load_config, resolve

RESOLVED = ("GameConfig", "ResolvedSweep", "load_config", "resolve")


def __getattr__(name: str) -> object:
    if name in RESOLVED:
        return getattr(import_module("bargain_ray.design.resolved"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["GameConfig", "ResolvedSweep", "deep_merge", "estimate", "game_config", "game_key", "game_part",
           "load_config", "resolve", "units"]
