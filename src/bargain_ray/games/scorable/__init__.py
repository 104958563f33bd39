"""Multi-party scorable negotiation (seed 003): score sheets, thresholds, vetoes, offers P1, P2, ..."""

from __future__ import annotations

from typing import ClassVar

from bargain_ray.games.base import Engine, Game, Metrics, Prompts, Strategy
from bargain_ray.games.scorable import engine, metrics, prompts, strategy
from bargain_ray.games.scorable.config import ScorableConfig
from bargain_ray.games.scorable.engine import Action, State
from bargain_ray.games.scorable.metrics import RESULTS
from bargain_ray.games.scorable.records import ScorableOutcome, ScorableTurn


class ScorableGame(Game[ScorableConfig, State, Action]):
    """The family bound to one table config."""

    family = "scorable"
    Config = ScorableConfig
    Fields = ScorableTurn
    Scored = ScorableOutcome
    engine: ClassVar[Engine[ScorableConfig, State, Action]] = engine
    prompts: ClassVar[Prompts[ScorableConfig, State]] = prompts
    metrics: ClassVar[Metrics[ScorableConfig, State]] = metrics
    results = RESULTS
    strategy: ClassVar[Strategy] = strategy

    def turn_limits(self) -> dict[str, int]:
        """Every party takes one turn a round."""
        return dict.fromkeys(self.roles, self.config.rounds)


GAME = ScorableGame
__all__ = ["GAME", "engine", "metrics", "prompts", "strategy"]
