"""Game families, found by the ``family`` key of a game config.

Each subpackage is one family, named as its ``family`` key: it exposes
``GAME``, a ``games.base.Game`` subclass naming its ``Config`` pydantic model and its
``engine``, ``prompts``, ``metrics`` and ``strategy`` modules (checked against the game
contract's protocols as the family loads). Adding a family adds a subpackage and nothing else here.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Mapping
from functools import cache
from types import ModuleType
from typing import Any

from bargain_ray.games.base import Game

KIT = "kit"
"""The one subpackage that is not a family: what every family shares."""


@cache
def names() -> tuple[str, ...]:
    """Every family this package holds (read from the package's folder once a process: the simulated provider asks
    with every request it answers)."""
    return tuple(sorted(info.name for info in pkgutil.iter_modules(__path__) if info.ispkg and info.name != KIT))


@cache
def family(name: str) -> ModuleType:
    """The package of one family, imported on first use."""
    if name not in names():
        raise ValueError(f"unknown game family {name!r}; known: {', '.join(names())}")
    return importlib.import_module(f"{__name__}.{name}")


def families() -> dict[str, ModuleType]:
    """family name -> its package, for code that serves every family (strategies, analysis)."""
    return {name: family(name) for name in names()}


def load_game(config: dict[str, Any]) -> Game:  # free-form: a game config as composed, typed by its family's schema
    """Validate a game config and bind its family to it."""
    cls = family(str(config.get("family"))).GAME
    return cls(cls.Config.model_validate(config))


def strategy_reply(system: str, messages: list[dict[str, str]], params: Mapping[str, Any]) -> str:  # free-form: a concession tactic's parameters (kind, exponent)
    """Answer a request as the concession tactic in ``params``, whichever family's prompt it is (the simulated
    provider answers HTTP requests with this, reading only the request's own text): each family's strategy reads
    the parameters its ``Params`` has (the free-text talker, a kind but no exponent)."""
    for package in families().values():
        strategy = package.GAME.strategy
        if strategy.recognizes(system):
            known = {k: v for k, v in params.items() if k in strategy.Params.model_fields}
            return strategy.respond(system, messages, known)
    raise ValueError("no strategy recognizes this prompt")
