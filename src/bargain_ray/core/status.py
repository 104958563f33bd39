"""How a game ended: the one vocabulary the engines, the loop, the store and analysis share."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict


class Status(StrEnum):
    """How a game ended. Only the first three are known results."""

    AGREEMENT = "AGREEMENT"
    NO_AGREEMENT = "NO_AGREEMENT"
    FORMAT_FAILURE = "FORMAT_FAILURE"
    TECHNICAL_ERROR = "TECHNICAL_ERROR"
    INTERRUPTED = "INTERRUPTED"

    @property
    def known(self) -> bool:
        """A technical failure is not an economic result: unknown, unscored, re-run."""
        return self in (Status.AGREEMENT, Status.NO_AGREEMENT, Status.FORMAT_FAILURE)


class Ended(BaseModel):
    """Why a game stopped, as decided by its engine."""

    model_config = ConfigDict(frozen=True)

    status: Status
    reason: str
