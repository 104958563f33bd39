"""Multi-party scorable negotiation (seed 003): score sheets, thresholds, vetoes, offers P1, P2, ..."""

from __future__ import annotations

from typing import Any, ClassVar

from bargain_ray.games.base import Ended, Prompt, RuleError
from bargain_ray.games.scorable import engine, metrics, prompts, strategy
from bargain_ray.games.scorable.config import ScorableConfig
from bargain_ray.games.scorable.engine import Action, State


class ScorableGame:
    """The family bound to one table config."""

    family: ClassVar[str] = "scorable"
    Config = ScorableConfig

    def __init__(self, config: ScorableConfig) -> None:
        self.config = config
        self.roles = config.roles
        self.max_repairs = config.max_repairs

    def start(self, seed: int, first_speaker: str | None) -> State:
        return engine.start(self.config, seed, first_speaker)

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
        return metrics.outcome(self.config, state)

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
