"""Two-party multi-issue alternating offers (seeds 000 and 001)."""

from __future__ import annotations

from typing import Any, ClassVar

from bargain_ray.games.base import Ended, Prompt, RuleError
from bargain_ray.games.multi_issue import engine, metrics, prompts, strategy
from bargain_ray.games.multi_issue.config import MultiIssueConfig
from bargain_ray.games.multi_issue.engine import Action, State


class MultiIssueGame:
    """The family bound to one scenario config."""

    family: ClassVar[str] = "multi_issue"
    Config = MultiIssueConfig

    def __init__(self, config: MultiIssueConfig) -> None:
        self.config = config
        self.roles = tuple(config.roles)
        self.max_repairs = config.max_repairs
        self.bounds = metrics.bounds(config)  # the same for every game of this config

    def start(self, seed: int, first_speaker: str | None) -> State:
        return engine.start(self.config, first_speaker)

    def to_move(self, state: State) -> str | None:
        return engine.to_move(self.config, state)

    def prompt(self, state: State, role: str) -> Prompt:
        return prompts.prompt(self.config, state, role)

    def parse(self, state: State, role: str, reply: str) -> Action:
        return engine.parse(self.config, state, role, reply)

    def repair_message(self, state: State, role: str, error: RuleError) -> str:
        return prompts.repair_message(self.config, state, error)

    def apply(self, state: State, role: str, action: Action) -> State:
        return engine.apply(self.config, state, role, action)

    def exhausted(self, state: State, role: str) -> State:
        return engine.exhausted(state, role)

    def ended(self, state: State) -> Ended | None:
        return state.ended

    def outcome(self, state: State) -> dict[str, Any]:
        return metrics.outcome(self.config, state, self.bounds)

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
