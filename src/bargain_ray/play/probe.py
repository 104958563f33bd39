"""One game played offline by the shared strategy agents to measure what its calls send: the dry run's estimate
(``design.estimate``) prices these counts."""

from __future__ import annotations

import asyncio
from collections import defaultdict

from bargain_ray.agents.base import Agent
from bargain_ray.agents.strategy import StrategyAgent
from bargain_ray.config.pricing import estimate_tokens
from bargain_ray.core.prompt import Prompt
from bargain_ray.core.records import Reply
from bargain_ray.core.unit import Unit
from bargain_ray.games.base import Game
from bargain_ray.play.loop import play

LINEAR = {"kind": "linear"}
"""The strategy the typical game is played with: it concedes steadily, as neither extreme does."""


class Measured:
    """An agent whose every prompt's input tokens are noted before ``inner`` answers it."""

    def __init__(self, inner: Agent, sizes: list[int]) -> None:
        self.inner = inner
        self.sizes = sizes

    async def act(self, prompt: Prompt, call_id: str) -> Reply:
        self.sizes.append(estimate_tokens(prompt.system + "".join(m.content for m in prompt.messages)))
        return await self.inner.act(prompt, call_id)


def typical_calls(game: Game, unit: Unit) -> dict[str, list[int]]:
    """Input tokens of each call, by role, in one offline game shaped like ``unit``, played by linear strategy
    agents reading the real prompts (the record grows turn by turn, so later calls send more)."""
    sizes: dict[str, list[int]] = defaultdict(list)
    agents: dict[str, Agent] = {role: Measured(StrategyAgent("linear", LINEAR, unit.family), sizes[role])
                               for role in game.roles}
    asyncio.run(play(game, agents, unit))
    return dict(sizes)
