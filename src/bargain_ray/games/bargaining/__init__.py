"""Single-issue price bargaining with private valuations and cheap talk (seed 002)."""

from __future__ import annotations

from bargain_ray.games.bargaining import engine, metrics, prompts, strategy
from bargain_ray.games.bargaining.config import BargainingConfig
from bargain_ray.games.bargaining.engine import Reply, State
from bargain_ray.games.bargaining.records import BargainingOutcome, BargainingTurn
from bargain_ray.games.base import Game


class BargainingGame(Game[BargainingConfig, State, Reply]):
    """The family bound to one protocol config."""

    family = "bargaining"
    Config = BargainingConfig
    Fields = BargainingTurn
    Scored = BargainingOutcome
    engine = engine
    prompts = prompts
    metrics = metrics
    results = metrics.RESULTS
    strategy = strategy
    private_fields = ("actual_valuation",)
    cell_metrics = metrics.CELL_METRICS
    illegal_rules = metrics.ILLEGAL_RULES
    ground_truth = metrics.GROUND_TRUTH


GAME = BargainingGame
__all__ = ["GAME", "engine", "metrics", "prompts", "strategy"]
