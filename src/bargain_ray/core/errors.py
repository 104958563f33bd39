"""Failures outside the protocol: never an economic result."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bargain_ray.core.records import Reply


class TechnicalFailure(Exception):
    """A call failed for reasons outside the protocol (after retries).

    The game is unknown, not scored, and run again on resume.
    """

    def __init__(self, message: str, reply: Reply | None = None) -> None:
        super().__init__(message)
        self.reply = reply
