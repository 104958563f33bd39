"""An agent that returns recorded replies, for re-scoring archived transcripts."""

from __future__ import annotations

from collections import deque

from bargain_ray.core.errors import Failure, FailureKind, TechnicalFailure
from bargain_ray.core.prompt import Prompt
from bargain_ray.core.records import Reply


class ReplayAgent:
    """Hands out recorded replies in call order; all roles share one queue."""

    def __init__(self, replies: deque[str]) -> None:
        self.replies = replies

    async def act(self, prompt: Prompt, call_id: str) -> Reply:
        request = {"system": prompt.system, "messages": [m.model_dump() for m in prompt.messages]}
        if not self.replies:
            raise TechnicalFailure(Failure(kind=FailureKind.REPLAY_EXHAUSTED,
                                           detail="the recorded replies ran out before the game ended"))
        return Reply(text=self.replies.popleft(), provider="replay", model="replay", request=request)
