"""What one model call sends: a private system prompt and the conversation.

Games render it, agents and clients send it; it lives here so clients never import a game.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from bargain_ray.core.form import ReplyForm


class Message(BaseModel):
    """One chat message as a provider receives it."""

    model_config = ConfigDict(frozen=True)

    role: str
    content: str


class Prompt(BaseModel):
    """What one call sends: the private system prompt and the conversation."""

    model_config = ConfigDict(frozen=True)

    system: str
    messages: tuple[Message, ...]
    json_schema: dict[str, Any] | None = None  # free-form: a JSON Schema, sent to the provider as is
    form: ReplyForm | None = Field(None, exclude=True)
    """The turn's moves as a person fills them in a human seat (``core.form``). Never sent and never dumped: a
    request, its journal key and its cost estimate are the same with or without it."""

    def repaired(self, reply: str, error: str) -> Prompt:
        """The same turn asked again: the invalid reply and the error appended."""
        return self.model_copy(
            update={
                "messages": (
                    *self.messages,
                    Message(role="assistant", content=reply),
                    Message(role="user", content=error),
                )
            }
        )
