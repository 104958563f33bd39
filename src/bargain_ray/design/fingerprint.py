"""What determines the games of a sweep, by name: the fingerprint a resume compares."""

from __future__ import annotations

import inspect
from typing import Any

from bargain_ray.config import RUNTIME_KEYS, SweepConfig
from bargain_ray.core.hashing import digest
from bargain_ray.design.merge import game_config
from bargain_ray.games import family
from bargain_ray.providers.routing import effective_model


def components(sweep: SweepConfig) -> dict[str, Any]:
    """What determines games, by name: compared on resume to name what changed."""
    out: dict[str, Any] = {}
    for d in sweep.grid.designs:
        for c in d.conditions:
            cfg = game_config(sweep, d.game, c)
            source = inspect.getsource(family(cfg["family"]).prompts)  # the wording
            out[f"game {d.game} under condition {c}"] = {"config": cfg, "prompts": digest(source)}
    for letter in sorted(sweep.models):
        m = effective_model(sweep, letter).model_dump(mode="json", exclude=set(RUNTIME_KEYS))
        out[f"model {letter} ({m['name']})"] = m
    return out
