"""The one thing a model client does: complete a prompt. It knows nothing of games."""

from __future__ import annotations

from typing import Protocol

from bargain_ray.agents.base import Reply
from bargain_ray.games.base import Prompt


class ModelClient(Protocol):
    async def complete(self, prompt: Prompt, call_id: str) -> Reply:
        """The reply, with usage, timing and attempts; raises TechnicalFailure after retries."""
        ...

    async def close(self) -> None:
        """Release connections."""
        ...
