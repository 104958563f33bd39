"""Free-text negotiation judged by a silent observer (seed 004: the orange, the battery pack)."""

from __future__ import annotations

from typing import Any

from bargain_ray.games.base import Game
from bargain_ray.games.freetext import engine, metrics, prompts, strategy
from bargain_ray.games.freetext.config import FreeTextConfig
from bargain_ray.games.freetext.engine import Said, State, Verdict


class FreeTextGame(Game):
    """The family bound to one scenario config; the observer is a role like the parties."""

    Config = FreeTextConfig
    engine = engine
    prompts = prompts
    metrics = metrics
    fields = metrics.FIELDS

    def turn_fields(self, state: State, role: str, action: Said | Verdict) -> dict[str, Any]:
        if isinstance(action, Said):
            return {"action": "MESSAGE", "party_turn": action.turn, "message": action.text,
                    "sentences": action.sentences, "words": action.words}
        return {"action": "VERDICT", "party_turn": action.turn, **action.model_dump(exclude={"turn"})}


GAME = FreeTextGame
__all__ = ["GAME", "engine", "metrics", "prompts", "strategy"]
