"""Single-issue price bargaining with private valuations and cheap talk (seed 002)."""

from __future__ import annotations

from typing import Any

from bargain_ray.games.bargaining import engine, metrics, prompts, strategy
from bargain_ray.games.bargaining.config import BargainingConfig
from bargain_ray.games.bargaining.engine import Reply, State, number
from bargain_ray.games.base import Game


class BargainingGame(Game):
    """The family bound to one protocol config."""

    Config = BargainingConfig
    engine = engine
    prompts = prompts
    metrics = metrics
    fields = metrics.FIELDS
    private_fields = ("actual_valuation",)

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
