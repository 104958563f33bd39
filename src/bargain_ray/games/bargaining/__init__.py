"""Single-issue price bargaining with private valuations and cheap talk (seed 002)."""

from __future__ import annotations

from typing import ClassVar

from bargain_ray.games.bargaining import engine, metrics, prompts, strategy
from bargain_ray.games.bargaining.config import BargainingConfig
from bargain_ray.games.bargaining.engine import Reply, State
from bargain_ray.games.bargaining.metrics import CELL_METRICS, GROUND_TRUTH, ILLEGAL_RULES, RESULTS
from bargain_ray.games.bargaining.records import BargainingOutcome, BargainingTurn
from bargain_ray.games.base import Engine, Game, Metrics, Prompts, Strategy


class BargainingGame(Game[BargainingConfig, State, Reply]):
    """The family bound to one protocol config."""

    family = "bargaining"
    Config = BargainingConfig
    Fields = BargainingTurn
    Scored = BargainingOutcome
    engine: ClassVar[Engine[BargainingConfig, State, Reply]] = engine
    prompts: ClassVar[Prompts[BargainingConfig, State]] = prompts
    metrics: ClassVar[Metrics[BargainingConfig, State]] = metrics
    results = RESULTS
    strategy: ClassVar[Strategy] = strategy
    private_fields = ("actual_valuation",)
    cell_metrics = CELL_METRICS
    illegal_rules = ILLEGAL_RULES
    ground_truth = GROUND_TRUTH

    def turn_limits(self) -> dict[str, int]:
        """One message a round for ``max_rounds`` rounds, alternating: each side has at most half, rounded up."""
        return dict.fromkeys(self.roles, (self.config.max_rounds + 1) // 2)


GAME = BargainingGame
__all__ = ["GAME", "engine", "metrics", "prompts", "strategy"]
