"""Multi-party scorable negotiation (seed 003): score sheets, thresholds, vetoes, offers P1, P2, ..."""

from __future__ import annotations

from typing import Any

from bargain_ray.games.base import Game
from bargain_ray.games.scorable import engine, metrics, prompts, strategy
from bargain_ray.games.scorable.config import ScorableConfig
from bargain_ray.games.scorable.engine import Action, State


class ScorableGame(Game):
    """The family bound to one table config."""

    Config = ScorableConfig
    engine = engine
    prompts = prompts
    metrics = metrics
    fields = metrics.FIELDS

    def turn_fields(self, state: State, role: str, action: Action) -> dict[str, Any]:
        entry = state.record[-1]
        return {
            "action": action.kind,
            "round": entry.round,
            "offer_id": entry.offer_id,
            "deal": action.deal,
            "message": action.message,
            "scratchpad": action.scratchpad,
            "closed_deal": state.deal is not None,
        }


GAME = ScorableGame
__all__ = ["GAME", "engine", "metrics", "prompts", "strategy"]
