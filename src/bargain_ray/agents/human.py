"""A human seat: the agent whose reply a person types in the seat page, instead of a model.

It hands the turn's prompt to the sweep's seat desk (``seats``: the page shows the person exactly that prompt, and
its form makes the reply text) and waits for the person's answer. The reply comes back as a model's does: provider
``human``, the text as the engine reads it, the time the person took, cost 0; so the call journal keeps it and a
resumed sweep replays it (the person is never asked the same turn twice), and the loop cannot tell a person played.
"""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from pydantic import BaseModel, ConfigDict

from bargain_ray.config.schema import HUMAN
from bargain_ray.core.errors import Failure, FailureKind, TechnicalFailure
from bargain_ray.core.prompt import Prompt
from bargain_ray.core.records import Reply


class Answer(BaseModel):
    """A person's answer to one turn, as the seat desk hands it back: the reply text (None: the turn's time limit
    passed unanswered), when the turn was asked, first shown on the person's page, and answered."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str | None
    asked_at: datetime
    shown_at: datetime | None
    answered_at: datetime

    @property
    def took_s(self) -> float:
        """The time the person took: from the page first showing the turn to the answer (ours)."""
        return max(0.0, (self.answered_at - (self.shown_at or self.asked_at)).total_seconds())


class Desk(Protocol):
    """Where a human seat's turn waits for its person (the seat server, reached however the runner reaches it)."""

    async def ask(self, seat: str, call_id: str, prompt: Prompt) -> Answer: ...


def seat_id(unit_id: str, role: str) -> str:
    """The name of one seat: a role of one game."""
    return f"{unit_id}:{role}"


class HumanAgent:
    """A role of one game played by a person through the seat ``seat`` of ``desk``."""

    def __init__(self, desk: Desk, seat: str, name: str) -> None:
        self.desk = desk
        self.seat = seat
        self.name = name

    async def act(self, prompt: Prompt, call_id: str) -> Reply:
        answer = await self.desk.ask(self.seat, call_id, prompt)
        if answer.text is None:
            raise TechnicalFailure(Failure(kind=FailureKind.ABSENT, detail=(
                "the person in the seat did not answer within run.seats.turn_limit_s: the game is unknown, "
                "and the turn is asked again when the sweep runs again")))
        return Reply(text=answer.text, provider=HUMAN, model=self.name,
                     request={"system": prompt.system, "messages": [m.model_dump() for m in prompt.messages]},
                     latency_s=answer.took_s, sent_at=answer.asked_at, answered_at=answer.answered_at)
