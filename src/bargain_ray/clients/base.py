"""What a model client does: complete a prompt into a reply. It knows nothing of games."""

from __future__ import annotations

from typing import Protocol

from bargain_ray.games.base import Prompt
from bargain_ray.records import CallMeta


class Reply(CallMeta):
    """The raw reply text and how it was obtained."""

    text: str


class TechnicalFailure(Exception):
    """A call failed for reasons outside the protocol (after retries).

    The game is unknown, not scored, and run again on resume.
    """

    def __init__(self, message: str, reply: Reply | None = None) -> None:
        super().__init__(message)
        self.reply = reply


class ModelClient(Protocol):
    async def complete(self, prompt: Prompt, call_id: str) -> Reply:
        """The reply, with usage, timing and attempts; raises TechnicalFailure after retries."""
        ...

    async def close(self) -> None:
        """Release connections."""
        ...
