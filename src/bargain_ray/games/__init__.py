"""Game families, found by the ``family`` key of a game config."""

from __future__ import annotations

from typing import Any

from bargain_ray.games.base import Game
from bargain_ray.games.multi_issue import MultiIssueGame

FAMILIES: dict[str, type] = {MultiIssueGame.family: MultiIssueGame}


def load_game(config: dict[str, Any]) -> Game:
    """Validate a game config and bind its family to it."""
    family = config.get("family")
    if family not in FAMILIES:
        raise ValueError(f"unknown game family {family!r}; known: {', '.join(sorted(FAMILIES))}")
    cls = FAMILIES[family]
    return cls(cls.Config.model_validate(config))
