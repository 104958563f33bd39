"""Two-party multi-issue alternating offers (seeds 000 and 001)."""

from __future__ import annotations

from typing import ClassVar

from bargain_ray.games.base import Engine, Game, Metrics, Prompts, Strategy, UtilitySpace
from bargain_ray.games.multi_issue import engine, frontier, metrics, prompts, strategy
from bargain_ray.games.multi_issue.config import MultiIssueConfig
from bargain_ray.games.multi_issue.engine import Action, State
from bargain_ray.games.multi_issue.metrics import RESULTS
from bargain_ray.games.multi_issue.records import MultiIssueOutcome, MultiIssueTurn


class MultiIssueGame(Game[MultiIssueConfig, State, Action]):
    """The family bound to one scenario config."""

    family = "multi_issue"
    Config = MultiIssueConfig
    Fields = MultiIssueTurn
    Scored = MultiIssueOutcome
    engine: ClassVar[Engine[MultiIssueConfig, State, Action]] = engine
    prompts: ClassVar[Prompts[MultiIssueConfig, State]] = prompts
    metrics: ClassVar[Metrics[MultiIssueConfig, State]] = metrics
    results = RESULTS
    strategy: ClassVar[Strategy] = strategy

    def outcome_bounds(self) -> dict[str, list[int | float]]:
        return metrics.bounds_figures(self.config)

    def utility_space(self) -> UtilitySpace:
        return frontier.space(self.config).utility_space()

    def turn_limits(self) -> dict[str, int]:
        """The sides alternate for ``max_turns`` turns and a final reply, so each has at most half, rounded up."""
        return dict.fromkeys(self.roles, (self.config.max_turns + 2) // 2)


GAME = MultiIssueGame
__all__ = ["GAME", "engine", "metrics", "prompts", "strategy"]
