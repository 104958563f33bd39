"""Free-text negotiation judged by a silent observer (seed 004: the orange, the battery pack)."""

from __future__ import annotations

from typing import ClassVar

from bargain_ray.games.base import Engine, Game, Metrics, Prompts, Strategy
from bargain_ray.games.freetext import engine, metrics, prompts, strategy
from bargain_ray.games.freetext.config import FreeTextConfig
from bargain_ray.games.freetext.engine import Said, State, Verdict
from bargain_ray.games.freetext.metrics import RESULTS
from bargain_ray.games.freetext.records import FreeTextOutcome, FreeTextTurn


class FreeTextGame(Game[FreeTextConfig, State, Said | Verdict]):
    """The family bound to one scenario config; the observer is a role like the parties."""

    family = "freetext"
    Config = FreeTextConfig
    Fields = FreeTextTurn
    Scored = FreeTextOutcome
    engine: ClassVar[Engine[FreeTextConfig, State, Said | Verdict]] = engine
    prompts: ClassVar[Prompts[FreeTextConfig, State]] = prompts
    metrics: ClassVar[Metrics[FreeTextConfig, State]] = metrics
    results = RESULTS
    strategy: ClassVar[Strategy] = strategy

    def parties(self) -> tuple[str, ...]:
        return tuple(self.config.parties)

    def turn_limits(self) -> dict[str, int]:
        """The parties alternate for ``max_turns`` messages; the observer gives a verdict after each."""
        limits = dict.fromkeys(self.config.parties, (self.config.max_turns + 1) // 2)
        return limits | {self.config.observer.role: self.config.max_turns}


GAME = FreeTextGame
__all__ = ["GAME", "engine", "metrics", "prompts", "strategy"]
