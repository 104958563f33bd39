"""What the game loop asks of an agent: a reply to a prompt, with its call metadata."""

from __future__ import annotations

from typing import Protocol

from bargain_ray.core.errors import TechnicalFailure
from bargain_ray.core.prompt import Prompt
from bargain_ray.core.records import Reply

__all__ = ["Agent", "Reply", "TechnicalFailure"]


class Agent(Protocol):
    """An LLM agent, a strategy agent or a replay agent: the loop cannot tell."""

    async def act(self, prompt: Prompt, call_id: str) -> Reply: ...
