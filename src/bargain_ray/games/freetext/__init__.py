"""Free-text negotiation judged by a silent observer (seed 004: the orange, the battery pack)."""

from __future__ import annotations

from typing import Any, ClassVar

from bargain_ray.games.base import Ended, Prompt, RuleError
from bargain_ray.games.freetext import engine, metrics, prompts, strategy
from bargain_ray.games.freetext.config import FreeTextConfig
from bargain_ray.games.freetext.engine import Said, State, Verdict


class FreeTextGame:
    """The family bound to one scenario config; the observer is a role like the parties."""

    family: ClassVar[str] = "freetext"
    Config = FreeTextConfig

    def __init__(self, config: FreeTextConfig) -> None:
        self.config = config
        self.roles = config.roles
        self.max_repairs = config.max_repairs

    def start(self, seed: int, first_speaker: str | None) -> State:
        return engine.start(self.config, first_speaker)

    def to_move(self, state: State) -> str | None:
        return engine.to_move(self.config, state)

    def prompt(self, state: State, role: str) -> Prompt:
        return prompts.prompt(self.config, state, role)

    def parse(self, state: State, role: str, reply: str) -> Said | Verdict:
        return engine.parse(self.config, state, role, reply)

    def repair_message(self, state: State, role: str, error: RuleError) -> str:
        return prompts.repair_message(self.config, role, error)

    def apply(self, state: State, role: str, action: Said | Verdict) -> State:
        return engine.apply(self.config, state, role, action)

    def exhausted(self, state: State, role: str) -> State:
        return engine.exhausted(self.config, state, role)

    def ended(self, state: State) -> Ended | None:
        return state.ended

    def outcome(self, state: State) -> dict[str, Any]:
        return metrics.outcome(self.config, state)

    def turn_fields(self, state: State, role: str, action: Said | Verdict) -> dict[str, Any]:
        if isinstance(action, Said):
            return {"action": "MESSAGE", "party_turn": action.turn, "message": action.text,
                    "sentences": action.sentences}
        return {"action": "VERDICT", "party_turn": action.turn, **action.model_dump(exclude={"turn"})}


GAME = FreeTextGame
__all__ = ["GAME", "engine", "metrics", "prompts", "strategy"]
