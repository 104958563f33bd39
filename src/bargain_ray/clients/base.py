"""What a model client does: complete a prompt into a reply. It knows nothing of games."""

from __future__ import annotations

from typing import Protocol

from bargain_ray.core.prompt import Prompt
from bargain_ray.core.records import Reply


class ModelClient(Protocol):
    async def complete(self, prompt: Prompt, call_id: str) -> Reply:
        """The reply, with usage, timing and attempts; raises TechnicalFailure after retries."""
        ...

    async def close(self) -> None:
        """Release connections."""
        ...
