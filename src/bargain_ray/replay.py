"""Re-score a recorded game: ``python -m bargain_ray.replay FILE.json``.

The file is ``{"game": NAME, "first_speaker": ROLE, "replies": [...],
"overrides": [...]}`` (optionally ``"unit": {...}`` identity fields); the
replies are fed in call order, repairs included, and the outcome record is
printed as one JSON object.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections import deque
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from bargain_ray.agents.replay import ReplayAgent
from bargain_ray.conf import compose_dict
from bargain_ray.games import load_game
from bargain_ray.loop import play
from bargain_ray.records import GameRecord


class ReplayFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    game: str
    first_speaker: str | None = None
    replies: list[str]
    overrides: list[str] = []
    seed: int = 0
    unit: dict[str, Any] = {}


def replay(spec: ReplayFile) -> GameRecord:
    """Play the recorded replies through the game's engine."""
    game = load_game(compose_dict(f"game/{spec.game}", spec.overrides)["game"])
    queue = deque(spec.replies)
    agent = ReplayAgent(queue)
    unit = {"unit_id": f"replay-{spec.game}", "seed": spec.seed, "first_speaker": spec.first_speaker} | spec.unit
    record = asyncio.run(play(game, dict.fromkeys(game.roles, agent), unit))
    if queue:
        record.outcome["unused_replies"] = len(queue)
    return record


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m bargain_ray.replay FILE.json", file=sys.stderr)
        return 2
    spec = ReplayFile.model_validate_json(Path(args[0]).read_text())
    print(json.dumps(replay(spec).outcome))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
