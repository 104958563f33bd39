"""Two-party multi-issue alternating offers (seeds 000 and 001)."""

from __future__ import annotations

from functools import cached_property
from typing import Any

from bargain_ray.games.base import Game, Scalar, UtilitySpace
from bargain_ray.games.multi_issue import engine, frontier, metrics, prompts, strategy
from bargain_ray.games.multi_issue.config import MultiIssueConfig
from bargain_ray.games.multi_issue.engine import Action, State


class MultiIssueGame(Game):
    """The family bound to one scenario config."""

    Config = MultiIssueConfig
    engine = engine
    prompts = prompts
    metrics = metrics
    fields = metrics.FIELDS

    def __init__(self, config: MultiIssueConfig) -> None:
        super().__init__(config)
        self.bounds = metrics.bounds(config)  # the same for every game of this config

    def outcome(self, state: State) -> dict[str, Any]:
        return metrics.outcome(self.config, state, self.bounds)

    @cached_property
    def space(self) -> frontier.Space:
        """The exact agreement space of this config, computed on first use."""
        return frontier.space(self.config)

    def game_metrics(self, record: dict[str, Any]) -> dict[str, Scalar]:
        """The multi-issue figures and the deal's place in the agreement space."""
        return metrics.per_game(record) | frontier.deal_distances(self.space, record["outcome"])

    def utility_space(self) -> UtilitySpace:
        return frontier.utility_space(self.space)

    def turn_fields(self, state: State, role: str, action: Action) -> dict[str, Any]:
        entry = state.record[-1]
        return {
            "action": action.kind,
            "offer_id": entry.offer_id,
            "terms": {k: str(v) for k, v in action.terms.items()} if action.terms else None,
            "message": action.message,
            "final_reply": entry.final_reply,
        }


GAME = MultiIssueGame
__all__ = ["GAME", "engine", "metrics", "prompts", "strategy"]
