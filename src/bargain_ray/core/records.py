"""The records a game leaves: its calls, its turns, and the game itself.

These are the rows of ``calls.parquet``, ``turns.parquet`` and
``games.parquet``; a finished game is journaled as one ``GameRecord``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializeAsAny,
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


def model_key(provider: str, model: str) -> str:
    """How a sweep names a model wherever it counts calls or looks one up (``provider:model``): the call journal's
    spend, the bar, the summary, the live view, the limiter's rows, the estimate and the drift references. The one
    place the name is made."""
    return f"{provider}:{model}"


def is_429(error: str) -> bool:
    """Whether a failed attempt's error (``CallMeta.attempt_errors``) was a rate limit."""
    return "429" in error or "RateLimitError" in error


def utc_now() -> datetime:
    """Now, UTC: when a call is sent and answered, when a game starts and ends."""
    return datetime.now(UTC)


class Served(BaseModel):
    """What a provider says answered a call, beyond the model name it was sent to: the model string it reports
    (Anthropic's and OpenAI's ``model``), OpenAI's ``system_fingerprint``, the upstream provider a router names
    (OpenRouter's ``provider``). None where it reports none."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model_version: str | None = None
    system_fingerprint: str | None = None
    served_by: str | None = None

    def changed_from(self, reference: Served) -> list[str]:
        """The fields both report and that differ: a drift from ``reference`` (a field one of them does not
        report is not compared: nothing says it changed)."""
        return [k for k, v in self if v is not None and getattr(reference, k) not in (None, v)]

    def reported(self) -> bool:
        return any(v is not None for _, v in self)

    def shown(self) -> str:
        """One phrase: ``claude-opus-5-5-20261001`` (``fp_44709d6fcb``, via ``Anthropic``)."""
        extra = [v for v in (self.system_fingerprint, self.served_by and f"via {self.served_by}") if v]
        return (self.model_version or "(no model reported)") + (f" ({', '.join(extra)})" if extra else "")


class CallMeta(BaseModel):
    """How a reply was obtained, as a client reports it. Never holds a key or an auth header."""

    model_config = ConfigDict(extra="forbid")

    provider: str
    model: str
    request: dict[str, Any]  # free-form: a request body, JSON as sent
    stop_reason: str | None = None
    usage: Usage = Usage()
    latency_s: float = 0.0
    attempts: int = 1
    attempt_errors: list[str] = []
    request_id: str | None = None
    model_version: str | None = None
    served_by: str | None = None  # the upstream provider that answered, as a router reports it (OpenRouter's "provider")
    system_fingerprint: str | None = None
    """OpenAI's backend configuration fingerprint of the reply; None where the API reports none."""
    cost_usd: float = 0.0
    sent_at: datetime | None = None
    """When the call began, UTC, before its waits on the limiter and its first attempt (None for a computed reply: a
    strategy agent's, a replayed transcript's)."""
    answered_at: datetime | None = None
    """When its answer came back, UTC (None for a call never answered)."""

    @property
    def key(self) -> str:
        """The call's model as the sweep names it (``model_key``)."""
        return model_key(self.provider, self.model)

    @property
    def rate_limited(self) -> int:
        """429s its failed attempts met."""
        return sum(map(is_429, self.attempt_errors))

    def served(self) -> Served:
        return Served(model_version=self.model_version, system_fingerprint=self.system_fingerprint,
                      served_by=self.served_by)


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


class FamilyRecord(BaseModel):
    """A family's own part of a record (its turn fields, its scored outcome), as the base every family's model
    subclasses (``games/<family>/records.py``).

    Core and the store never know a family (``tests/test_layout.py``), so a journal line read there keeps this
    part as written: this base, its keys kept in their order as extra fields. The family's ``Game.typed``
    validates it into the family's model where the family's own code reads it (its metrics), and ``of`` gives a
    family's reader its model either way. Both forms write the same JSON, and are equal when they do (a record
    read back equals the one written)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    @classmethod
    def of(cls, part: FamilyRecord) -> Self:
        """``part`` as this model: itself once its Game has typed it, else validated from its JSON as read."""
        return part if isinstance(part, cls) else cls.read(part.written())

    @classmethod
    def read(cls, data: dict[str, Any]) -> Self:  # free-form: a family's part as written, validated here
        """This model of ``data`` as written (a family whose part has several shapes picks one here)."""
        return cls.model_validate(data)

    def written(self) -> dict[str, Any]:  # free-form: the part's JSON, as its record writes it
        """This part as its record writes it (JSON values, in order): kept so as read back, dumped once typed."""
        extra = self.model_extra
        if extra is not None and not type(self).__pydantic_fields__:
            return dict(extra)
        return self.model_dump(mode="json")

    @property
    def blank(self) -> bool:
        """Nothing to type: the empty part of an invalid turn or of a game with no scored outcome."""
        return not type(self).__pydantic_fields__ and not self.model_extra

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FamilyRecord):
            return NotImplemented
        return self.written() == other.written()

    def __hash__(self) -> int:
        return hash(self.model_dump_json())


class FamilyFields(FamilyRecord):
    """The base of a family's turn fields (``TurnRecord.fields``): what its engine's ``turn_fields`` returns."""


class FamilyOutcome(FamilyRecord):
    """The base of a family's scored outcome (``Outcome.scored``): what its metrics' ``outcome`` returns, its
    figures in ``core.figures`` form and in the order seed 001's outcome has them."""


class TurnRecord(BaseModel):
    """One accepted move (or the move that exhausted its repairs)."""

    model_config = ConfigDict(extra="forbid")

    unit_id: str
    turn: int
    role: str
    call_ids: list[str]
    attempts: int
    valid: bool
    fields: SerializeAsAny[FamilyFields] = FamilyFields()
    """The family's fields of a legal turn (an invalid one has none)."""


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

    ``scored`` is the family's model as its ``metrics.outcome`` returns it (exact figures in ``core.figures``
    form; read back from a journal, the base ``FamilyOutcome`` until the family's Game types it). On the wire (journal line, ``games.parquet``'s
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
    scored: SerializeAsAny[FamilyOutcome] = FamilyOutcome()
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
    def _flat(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:  # free-form: a serializer's JSON output
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
    started_at: datetime | None = None
    """When the game started and ended, UTC, as its runner played it (None in a record from before they were
    kept, and in a replayed transcript's)."""
    ended_at: datetime | None = None
