"""The records a game leaves: its calls, its turns, and the game itself.

These are the rows of ``calls.parquet``, ``turns.parquet`` and
``games.parquet``; a finished game is journaled as one ``GameRecord``.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from bargain_ray.core.text import whole_characters

Scalar = str | int | float | bool | None
"""One cell of a metrics row."""


class Usage(BaseModel):
    """Tokens as the provider reported them."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0


class CallMeta(BaseModel):
    """How a reply was obtained, as a client reports it. Never holds a key or an auth header."""

    model_config = ConfigDict(extra="forbid")

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
    served_by: str | None = None  # the upstream provider that answered, as a router reports it (OpenRouter's "provider")
    cost_usd: float = 0.0


class Reply(CallMeta):
    """The reply text and how it was obtained: what an agent returns to the loop.

    Lone surrogates in ``text`` (decoded from a JSON escape no UTF-8 body can carry, so no
    provider meant them as text) become U+FFFD here (``core.text``), before the reply is journaled,
    recorded or shown to the other side. NUL and other control characters are kept as the model
    sent them (valid UTF-8); the report escapes them.
    """

    text: str

    @field_validator("text")
    @classmethod
    def _whole_characters(cls, text: str) -> str:
        return whole_characters(text)


class CallRecord(CallMeta):
    """One agent call: one row of calls.parquet, the client's metadata plus where it sits in the game."""

    call_id: str
    unit_id: str
    role: str
    turn: int
    repair: int = Field(description="0 for the first ask of a turn, 1.. for each repair")
    response_text: str | None = None
    status: str = "ok"
    valid: bool | None = None
    rule: str | None = None
    error: str | None = None
    resumed: bool = False


class TurnRecord(BaseModel):
    """One accepted move (or the move that exhausted its repairs)."""

    model_config = ConfigDict(extra="forbid")

    unit_id: str
    turn: int
    role: str
    call_ids: list[str]
    attempts: int
    valid: bool
    fields: dict[str, Any] = {}


class GameRecord(BaseModel):
    """A game as journaled: its unit, its outcome record, its turns and calls, and the family's figures
    of it (computed once, when the game ends, so analysis reads them from the tables)."""

    model_config = ConfigDict(extra="forbid")

    unit: dict[str, Any]
    outcome: dict[str, Any]
    turns: list[TurnRecord]
    calls: list[CallRecord]
    metrics: dict[str, Scalar] = {}
    """The family's per-game figures (empty for a game with no known result)."""
    turn_metrics: list[dict[str, Scalar]] = []
    """The family's per-turn figures, each row naming its ``turn``."""
