"""Re-score a recorded game: its replies fed in call order through the game's engine."""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Any

from pydantic import BaseModel, ConfigDict

from bargain_ray.agents.replay import ReplayAgent
from bargain_ray.config import compose_dict
from bargain_ray.core.records import GameRecord
from bargain_ray.games import load_game
from bargain_ray.play.loop import play


class ReplayFile(BaseModel):
    """``{"game": NAME, "first_speaker": ROLE, "replies": [...], "overrides": [...]}`` (the replay contract)."""

    model_config = ConfigDict(extra="forbid")

    game: str
    first_speaker: str | None = None
    replies: list[str]
    overrides: list[str] = []
    seed: int = 0
    unit: dict[str, Any] = {}


def rescore(spec: ReplayFile) -> GameRecord:
    """Play the recorded replies through the game's engine."""
    game = load_game(compose_dict(f"game/{spec.game}", spec.overrides)["game"])
    queue = deque(spec.replies)
    agent = ReplayAgent(queue)
    unit = {"unit_id": f"replay-{spec.game}", "seed": spec.seed, "first_speaker": spec.first_speaker} | spec.unit
    record = asyncio.run(play(game, dict.fromkeys(game.roles, agent), unit))
    if queue:
        record.outcome["unused_replies"] = len(queue)
    return record
