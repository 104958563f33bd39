"""The design: a grid expanded into units, the fingerprint a resume compares, the dry-run estimate."""

from bargain_ray.design.estimate import estimate
from bargain_ray.design.fingerprint import components
from bargain_ray.design.merge import deep_merge, game_config
from bargain_ray.design.units import units

__all__ = ["components", "deep_merge", "estimate", "game_config", "units"]
