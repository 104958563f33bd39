"""What the game loop asks of an agent: a reply to a prompt, with its call metadata."""

from __future__ import annotations

from typing import Any, Protocol

from pydantic import BaseModel

from bargain_ray.games.base import Prompt
from bargain_ray.records import Usage


class Reply(BaseModel):
    """The raw reply text and how it was obtained."""

    text: str
    provider: str
    model: str
    request: dict[str, Any]
    stop_reason: str | None = None
    usage: Usage = Usage()
    latency_s: float = 0.0
    attempts: int = 1
    attempt_errors: list[str] = []
    request_id: str | None = None
    model_version: str | None = None
    cost_usd: float = 0.0


class TechnicalFailure(Exception):
    """A call failed for reasons outside the protocol (after retries).

    The game is unknown, not scored, and run again on resume.
    """

    def __init__(self, message: str, reply: Reply | None = None) -> None:
        super().__init__(message)
        self.reply = reply


class Agent(Protocol):
    """An LLM agent, a strategy agent or a replay agent: the loop cannot tell."""

    async def act(self, prompt: Prompt, call_id: str) -> Reply: ...
