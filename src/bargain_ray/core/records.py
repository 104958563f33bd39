"""The records a game leaves: its calls, its turns, and the game itself.

These are the rows of ``calls.parquet``, ``turns.parquet`` and
``games.parquet``; a finished game is journaled as one ``GameRecord``.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator


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
    cost_usd: float = 0.0


class Reply(CallMeta):
    """The reply text and how it was obtained: what an agent returns to the loop.

    The one place text from outside is made safe: lone surrogates (a JSON escape such as
    ``"\\ud800"``, which no UTF-8 body can carry, so no provider meant it as text) become U+FFFD
    here, before the reply is journaled, recorded or shown to the other side, so the next request,
    both journals, parquet and the report all hold valid Unicode. NUL and other control characters
    are kept as the model sent them (they are valid UTF-8); the report escapes them.
    """

    text: str

    @field_validator("text")
    @classmethod
    def _whole_characters(cls, text: str) -> str:
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:  # pairs written as two escapes join; lone halves become U+FFFD
            return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
        return text


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
    """A game as journaled: its unit, its outcome record, its turns and calls."""

    model_config = ConfigDict(extra="forbid")

    unit: dict[str, Any]
    outcome: dict[str, Any]
    turns: list[TurnRecord]
    calls: list[CallRecord]
