"""The records a game leaves: its calls, its turns, and the game itself.

These are the rows of ``calls.parquet``, ``turns.parquet`` and
``games.parquet``; a finished game is journaled as one ``GameRecord``.
"""

from __future__ import annotations

from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)

from bargain_ray.core.errors import Failure
from bargain_ray.core.status import Status
from bargain_ray.core.text import whole_characters
from bargain_ray.core.unit import Unit

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


class InvalidAttempt(BaseModel):
    """A reply that broke a rule: which call, whose, and the rule's code and sentence."""

    model_config = ConfigDict(extra="forbid")

    call_id: str
    role: str
    turn: int
    rule: str
    error: str


class Outcome(BaseModel):
    """How a game ended: the fields every family has, typed, and the family's own figures in ``scored``.

    ``scored`` is the family's data as its ``metrics.outcome`` returns it (JSON values, exact figures in
    ``core.figures`` form), one dict rather than a model per family: four families' outcome shapes are
    read by their own metrics, the tables and the report as JSON, and a model each would repeat every
    field list for no reader that needs it typed. On the wire (journal line, ``games.parquet``'s
    ``outcome``, the replay print) an outcome is one flat object in seed 001's order: calls, repairs,
    invalid attempts, bounds (families that have them), status, known, reason, agreement, the failure (unknown
    games only), the family's figures, technical_pass. Reading one back puts every key this model does not name into ``scored``.
    """

    model_config = ConfigDict(extra="forbid")

    calls_attempted: int
    repairs_used: int
    invalid_attempts: list[InvalidAttempt] = []
    bounds: dict[str, list[int | float]] | None = None
    """Each figure's range under the game's config (multi-issue: each gain and the joint gain)."""
    status: Status
    known: bool
    reason: str
    agreement: bool
    failure: Failure | None = None
    """What made an unknown game unknown, typed (None for a known game; left off the wire then)."""
    scored: dict[str, Any] = {}
    """The family's figures of the game (empty for an unknown one)."""
    technical_pass: bool

    @model_validator(mode="before")
    @classmethod
    def _gather_scored(cls, data: Any) -> Any:
        """A flat object (as written) back into the named fields and ``scored``."""
        if isinstance(data, dict) and "scored" not in data:
            fields = cls.__pydantic_fields__  # a plain dict (``model_fields`` is a descriptor: slow per key)
            named = {k: v for k, v in data.items() if k in fields}
            return named | {"scored": {k: v for k, v in data.items() if k not in fields}}
        return data

    @model_serializer(mode="wrap")
    def _flat(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data = handler(self)
        scored = data.pop("scored", {})
        tail = {"technical_pass": data.pop("technical_pass")} if "technical_pass" in data else {}
        for key in ("bounds", "failure"):
            if key in data and data[key] is None:
                del data[key]
        return data | scored | tail


class GameRecord(BaseModel):
    """A game as journaled: its unit, its outcome, its turns and calls, and the family's figures
    of it (computed once, when the game ends, so analysis reads them from the tables).

    The unit is the first key and ``unit_id`` its first field: ``store.journal``'s index reads a
    line's unit id from its head without parsing the line."""

    model_config = ConfigDict(extra="forbid")

    unit: Unit
    outcome: Outcome
    turns: list[TurnRecord]
    calls: list[CallRecord]
    metrics: dict[str, Scalar] = {}
    """The family's per-game figures (empty for a game with no known result)."""
    turn_metrics: list[dict[str, Scalar]] = []
    """The family's per-turn figures, each row naming its ``turn``."""
