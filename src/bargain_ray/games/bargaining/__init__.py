"""Single-issue price bargaining with private valuations and cheap talk (seed 002)."""

from __future__ import annotations

from typing import Any, ClassVar

from bargain_ray.games.bargaining import engine, metrics, prompts, strategy
from bargain_ray.games.bargaining.config import ROLES, BargainingConfig
from bargain_ray.games.bargaining.engine import Reply, State, number
from bargain_ray.games.base import Ended, Prompt, RuleError


class BargainingGame:
    """The family bound to one protocol config."""

    family: ClassVar[str] = "bargaining"
    Config = BargainingConfig

    def __init__(self, config: BargainingConfig) -> None:
        self.config = config
        self.roles = ROLES
        self.max_repairs = config.max_repairs

    def start(self, seed: int, first_speaker: str | None) -> State:
        return engine.start(self.config, seed, first_speaker)

    def to_move(self, state: State) -> str | None:
        return engine.to_move(state)

    def prompt(self, state: State, role: str) -> Prompt:
        return prompts.prompt(self.config, state, role)

    def parse(self, state: State, role: str, reply: str) -> Reply:
        return engine.parse(self.config, state, role, reply)

    def repair_message(self, state: State, role: str, error: RuleError) -> str:
        return prompts.repair_message(state, error)

    def apply(self, state: State, role: str, action: Reply) -> State:
        return engine.apply(self.config, state, role, action)

    def exhausted(self, state: State, role: str) -> State:
        return engine.exhausted(state, role)

    def ended(self, state: State) -> Ended | None:
        return state.ended

    def outcome(self, state: State) -> dict[str, Any]:
        return metrics.outcome(self.config, state)

    def turn_fields(self, state: State, role: str, action: Reply) -> dict[str, Any]:
        """Seed 002's turn record: the parsed reply, the truth, and the public part the other side saw."""
        entry = state.record[-1]
        before = entry.standing_before
        view = engine.public(entry)
        return {
            "round": entry.round,
            "role": role,
            "action": action.action,
            "offer": number(action.offer),
            "stated_valuation": number(action.stated_valuation),
            "actual_valuation": engine.valuation(state, role),
            "standing_offer_before": number(before.price) if before else None,
            "accepted_price": number(entry.accepted_price),
            "message": action.message,
            "reasoning_private": action.reasoning_private,
            "public": {k: number(v) if k in ("offer", "stated_valuation") else v for k, v in view.items()},
        }


GAME = BargainingGame
__all__ = ["GAME", "engine", "metrics", "prompts", "strategy"]
