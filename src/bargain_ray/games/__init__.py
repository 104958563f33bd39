"""Game families, found by the ``family`` key of a game config.

Each subpackage is one family: it exposes ``GAME`` (the family class, with a
``Config`` pydantic model) and modules ``engine``, ``prompts``, ``metrics``
and ``strategy``. Adding a family adds a subpackage and nothing else here.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache
from types import ModuleType
from typing import Any

from bargain_ray.games.base import Game


@cache
def families() -> dict[str, ModuleType]:
    """family name -> its package, discovered once."""
    out = {}
    for info in pkgutil.iter_modules(__path__):
        if info.ispkg:
            module = importlib.import_module(f"{__name__}.{info.name}")
            out[module.GAME.family] = module
    return out


def load_game(config: dict[str, Any]) -> Game:
    """Validate a game config and bind its family to it."""
    family = config.get("family")
    known = families()
    if family not in known:
        raise ValueError(f"unknown game family {family!r}; known: {', '.join(sorted(known))}")
    cls = known[family].GAME
    return cls(cls.Config.model_validate(config))
