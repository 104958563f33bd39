"""A journaled game as table rows: the one flattening of records, used by the tables and by analysis.

A concept has one column name in every table and in the dataset (seed 002's card names win where the
card has one): who played a role is ``<role>_model`` / ``<role>_agent``, a side's tokens
``<role>_prompt_tokens`` / ``<role>_completion_tokens``, the result ``outcome`` (``deal``, ``no_deal``,
``format_failure``, ``technical_failure``), repairs ``total_retries``, a turn's replies asked ``n_attempts``.
``games.parquet`` holds every per-game figure (the shared columns below, the family's metrics computed
when the game ended, its scalar outcome fields) beside the full outcome object (``outcome_json``, for
replay). Nothing a researcher needs is a JSON string: a deal's terms are ``deal_<term>`` numbers and a
turn's action fields each have a typed column in ``turns.parquet`` (a dict of scalars, e.g. an offer's
terms, as ``<field>_<key>``; decimal strings as numbers). A column exists where a value can: a family's
outcome and turn fields that are empty in a game add nothing to its row (so no column is null in every
row because its values are nested elsewhere), the family's declared figures and the shared columns are
always there.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from datetime import datetime
from types import NoneType, UnionType
from typing import Any, ClassVar, get_args

import polars as pl
from pydantic import BaseModel, ConfigDict

from bargain_ray.config.schema import HUMAN
from bargain_ray.core.figures import is_figure, value_of
from bargain_ray.core.records import CallMeta, CallRecord, FamilyFields, GameRecord, Served
from bargain_ray.core.status import Status

UTC_TIME = pl.Datetime("us", "UTC")
_COLUMN_TYPES: dict[Any, pl.DataType | type[pl.DataType]] = {
    str: pl.String, int: pl.Int64, float: pl.Float64, bool: pl.Boolean, datetime: UTC_TIME, list[str]: pl.List(pl.String)}


def _column_type(annotation: Any) -> pl.DataType | type[pl.DataType]:
    """A row field's column type (None aside: a column holds nulls)."""
    if isinstance(annotation, UnionType):
        (annotation,) = (a for a in get_args(annotation) if a is not NoneType)
    return _COLUMN_TYPES[annotation]


def schema_of(row: type[BaseModel]) -> dict[str, pl.DataType | type[pl.DataType]]:
    """A row model's columns and their types."""
    return {name: _column_type(f.annotation) for name, f in row.model_fields.items()}


IDENTITY = (
    "unit_id", "experiment", "game", "family", "condition", "pairing", "assignment", "cell",
    "seed", "block", "position", "first_speaker",
)
ROWS = ConfigDict(extra="forbid", use_attribute_docstrings=True)
"""A row model: its fields are the table's columns in order, each field's docstring what the column means (the card
and the per-game table read them from here, ``meanings``)."""


class SharedColumns(BaseModel):
    """The columns every game has, whatever its family (a sweep without games still has them)."""

    model_config = ROWS

    unit_id: str
    """readable game id: experiment, block, position, pairing, assignment (join key to every table)"""
    experiment: str
    """experiment label of the grid"""
    game: str
    """game config name"""
    family: str
    """game family"""
    condition: str
    """protocol condition"""
    pairing: str
    """model letters in agent order (A, B, ...)"""
    assignment: int
    """which agent takes which role"""
    cell: str
    """the cell's name from the grid, else its label condition|pairing|a<assignment>, with |<first speaker> where the
    design varies who speaks first"""
    seed: int
    """the block's seed: the same seed means the same random draws in every cell"""
    block: int
    """replicate block"""
    position: int
    """position within the block (seeded shuffle)"""
    first_speaker: str | None
    """role that moved first"""
    status: str
    """AGREEMENT, NO_AGREEMENT, FORMAT_FAILURE (known results) or TECHNICAL_ERROR, INTERRUPTED (unknown, unscored)"""
    outcome: str
    """`deal`, `no_deal`, or `format_failure` (`technical_failure`: unknown, unscored, re-run on resume)"""
    known: bool
    """the game has an economic result (an unknown game has none)"""
    reason: str
    """why the game ended"""
    agreement: bool | None
    """a deal was made (null if unknown)"""
    format_failure: bool | None
    """a side used up its repairs (null if unknown)"""
    technical_failure: bool
    """the game has no known result (a technical failure, an observer that could not be read, the budget, a stop):
    unscored, played again on resume"""
    technical_pass: bool
    """the game ended in agreement or no agreement (no format or technical failure)"""
    failed_role: str | None
    """the role whose repairs ran out, when the game ended on its invalid turn (a side's format failure, or an observer
    whose verdict could not be read); empty otherwise"""
    rounds: int
    """turns recorded: the accepted moves, and the move that used up its repairs"""
    rounds_to_agreement: int | None
    """turns recorded, for deals only"""
    calls_attempted: int
    """model calls, repairs included"""
    total_retries: int
    """format retries (repair prompts) across the game"""
    invalid_attempts: int
    """replies that broke a rule"""
    input_tokens: int
    """input tokens over the game's calls (replayed ones included)"""
    output_tokens: int
    """output tokens over the game's calls (replayed ones included)"""
    cost_usd: float
    """cost of the game's calls at the configured prices, in US dollars (a replayed call's too: it was paid once,
    when first sent)"""


class GameColumns(SharedColumns):
    """One row of games.parquet: the shared columns, those named per role (``PER_ROLE``), the family's figures and
    outcome fields (documented by the family), and what the journal keeps of the game."""

    unit_hash: str
    """hash of everything that determines the game"""
    outcome_json: str
    """the whole outcome object as the journal holds it (for replay)"""
    started_at: datetime | None
    """when the game started, UTC"""
    ended_at: datetime | None
    """when the game ended, UTC"""

    PER_ROLE: ClassVar[dict[str, str]] = {
        "*_model": "model that played the role, as configured",
        "*_agent": "agent letter (A, B, ...) that played the role",
        "*_prompt_tokens": "input tokens of the side's calls",
        "*_completion_tokens": "output tokens of the side's calls",
    }
    """The columns named after each role (``*``), and what they mean."""
    PEOPLE: ClassVar[dict[str, str]] = {
        "*_human": "true where a person played the role in a human seat (its calls are the person's replies, provider "
                   "human); empty where a model or an agent did; only in sweeps with human seats",
    }
    """The columns a sweep with human seats adds per role."""


SHARED_SCHEMA = schema_of(SharedColumns)
GAME_SCHEMA = schema_of(GameColumns)
OUTCOMES = {Status.AGREEMENT: "deal", Status.NO_AGREEMENT: "no_deal", Status.FORMAT_FAILURE: "format_failure",
            Status.TECHNICAL_ERROR: "technical_failure", Status.INTERRUPTED: "technical_failure"}
"""Seed 002's ``outcome`` values; ``technical_failure`` is ours (an unknown game, re-run on resume)."""

DECIMAL_TEXT = re.compile(r"-?\d+(\.\d+)?")
"""A decimal as a record writes it in text (a deal's terms, ``"64.50"``): the tables and the report show it as a number."""


def failed_role(rec: GameRecord) -> str | None:
    """The role whose repairs ran out: a game that ended on an invalid turn (a format failure, or an observer
    that could not be read) names its role; any other game none."""
    last = rec.turns[-1] if rec.turns else None
    return last.role if last is not None and not last.valid else None


def shared_columns(rec: GameRecord) -> dict[str, Any]:  # free-form: rows as polars takes them (columns vary per family)
    """The columns every family has, from the unit, the loop's outcome, turns and calls."""
    unit, out = rec.unit, rec.outcome
    known = out.known
    rounds = len(rec.turns)
    return {k: getattr(unit, k) for k in IDENTITY} | {
        "status": out.status.value, "outcome": OUTCOMES.get(out.status), "known": known, "reason": out.reason,
        "agreement": out.agreement if known else None,
        "format_failure": out.status == Status.FORMAT_FAILURE if known else None,
        "technical_failure": not known,
        "technical_pass": out.technical_pass,
        "failed_role": failed_role(rec),
        "rounds": rounds, "rounds_to_agreement": rounds if out.agreement else None,
        "calls_attempted": out.calls_attempted, "total_retries": out.repairs_used,
        "invalid_attempts": len(out.invalid_attempts),
        "input_tokens": sum(c.usage.input_tokens for c in rec.calls),
        "output_tokens": sum(c.usage.output_tokens for c in rec.calls),
        "cost_usd": sum(c.cost_usd for c in rec.calls),
    }


def _cell(v: Any) -> Any:
    """A scalar as a typed cell; a figure as its number; anything nested (or empty) is left out."""
    if is_figure(v):
        return value_of(v)
    return v if isinstance(v, bool | int | float | str) else _SKIP


_SKIP = object()


def side_tokens(rec: GameRecord) -> dict[str, int]:
    """Each side's tokens (seed 002's ``<role>_prompt_tokens``, ``<role>_completion_tokens``): every role that
    played, then any other role that was asked."""
    roles = dict.fromkeys([*rec.unit.models_by_role, *(c.role for c in rec.calls)])
    out: dict[str, int] = {}
    for role in roles:
        usage = [c.usage for c in rec.calls if c.role == role]
        out |= {f"{role}_prompt_tokens": sum(u.input_tokens for u in usage),
                f"{role}_completion_tokens": sum(u.output_tokens for u in usage)}
    return out


def game_row(rec: GameRecord) -> dict[str, Any]:  # free-form: table rows as polars takes them (columns vary per family)
    """One row of games.parquet: identity, who played, status, every figure, and the outcome object."""
    unit = rec.unit
    row = shared_columns(rec)
    row |= {f"{role}_model": name for role, name in unit.models_by_role.items()}
    row |= {f"{role}_agent": agent for role, agent in unit.agent_of_role.items()}
    row |= {f"{c.role}_human": True for c in rec.calls if c.provider == HUMAN}
    row |= side_tokens(rec)
    row["unit_hash"] = unit.hash
    row |= {"started_at": rec.started_at, "ended_at": rec.ended_at}
    for key, value in rec.outcome.scored.written().items():  # the named fields are the shared columns already
        if key not in row and (cell := _cell(value)) is not _SKIP:
            row[key] = cell
    row |= rec.metrics  # the family's figures win: they name each figure once
    row["outcome_json"] = json.dumps(rec.outcome.model_dump(mode="json"), default=str)  # as the journal line holds it
    return row


class TurnColumns(BaseModel):
    """The columns every turn has, in turns.parquet; a family's action fields (as ``<field>`` or ``<field>_<key>``) and
    its per-turn metrics add their own (documented by the family)."""

    model_config = ROWS

    unit_id: str
    """game (join key)"""
    turn: int
    """turn number"""
    role: str
    """who moved"""
    model: str | None
    """model that played the role, as configured"""
    call_ids: list[str]
    """the calls of this turn, repairs included (`<unit_id>-k01`, ...): a list in the sweep's turns.parquet,
    comma-separated in the dataset"""
    n_attempts: int
    """replies asked for this turn (format retries + 1)"""
    n_errors: int
    """invalid replies of the turn"""
    valid: bool
    """false if the repairs ran out"""
    action: str | None
    """the action taken. **Authoritative**"""
    message: str | None
    """text shown to the other side(s)"""
    turn_scored: bool
    """the family scored this turn (its per-turn metrics are in this row)"""
    served_by: str | None
    """the upstream provider that answered the turn's last call, as a router reports it (empty for direct APIs)"""
    sent_at: datetime | None
    """when the turn's first call was sent, UTC"""
    answered_at: datetime | None
    """when the turn's last call was answered, UTC"""


TURN_SCHEMA = schema_of(TurnColumns)


def _number(v: Any) -> Any:
    """A decimal string as written in a record (terms) as its number."""
    return float(v) if isinstance(v, str) and DECIMAL_TEXT.fullmatch(v) else v


def action_columns(fields: FamilyFields) -> dict[str, Any]:  # free-form: table cells as polars takes them (columns vary per family)
    """A turn's family fields as typed cells: scalars as they are, a dict of scalars as ``<field>_<key>`` (its
    decimal strings, e.g. an offer's terms as the record writes them, as numbers); empty fields and nested
    lists add nothing. The store knows no family (its records are read at the core layer), so it reads the
    fields as the JSON they write, typed or as read back alike."""
    out: dict[str, Any] = {}  # free-form: table rows as polars takes them (columns vary per family)
    for key, value in fields.written().items():
        if isinstance(value, dict):
            out |= {f"{key}_{k}": cell for k, v in value.items() if (cell := _cell(_number(v))) is not _SKIP}
        elif (cell := _cell(value)) is not _SKIP:
            out[key] = cell
    return out


def turn_rows(rec: GameRecord) -> list[dict[str, Any]]:  # free-form: rows as polars takes them
    """The rows of turns.parquet for one game: the turn, the model that answered, its replies asked and the
    invalid ones, each action field in its own typed column, the family's per-turn metrics of that turn
    beside them (``turn_scored`` marks the turns that have them)."""
    scored = {m["turn"]: m for m in rec.turn_metrics if "turn" in m}
    calls = {c.call_id: c for c in rec.calls}
    models = rec.unit.models_by_role
    rows = []
    for t in rec.turns:
        asked = [calls[i] for i in t.call_ids if i in calls]
        row = {"unit_id": t.unit_id, "turn": t.turn, "role": t.role, "model": models.get(t.role),
               "call_ids": t.call_ids, "n_attempts": t.attempts, "n_errors": sum(c.valid is False for c in asked),
               "valid": t.valid}
        cells = action_columns(t.fields)
        row |= {"action": cells.get("action"), "message": cells.get("message")}
        row |= {k: v for k, v in cells.items() if k not in row}
        metrics = scored.get(t.turn)
        row |= {k: v for k, v in (metrics or {}).items() if k not in row}
        row["turn_scored"] = metrics is not None
        row["served_by"] = calls[t.call_ids[-1]].served_by if t.call_ids and t.call_ids[-1] in calls else None
        row |= {"sent_at": asked[0].sent_at if asked else None, "answered_at": asked[-1].answered_at if asked else None}
        rows.append(row)
    return rows


class CallRow(BaseModel):
    """One row of calls.parquet, its columns in order: the call's fields, its usage as columns, the request as
    sent (JSON), its drift from the sweep's reference. The table's schema is this model's (``CALL_SCHEMA``)."""

    model_config = ROWS

    call_id: str
    """`<unit_id>-kNN`, in call order"""
    unit_id: str
    """game (join key)"""
    role: str
    """role that was asked"""
    turn: int
    """turn number"""
    repair: int
    """0 for the first ask of a turn, 1.. for repairs"""
    provider: str
    """provider the call went through (`sim` or `local` for a rehearsal)"""
    model: str
    """model as configured"""
    request: str
    """the request as sent, as JSON (the provider's body; no keys)"""
    response_text: str | None
    """the reply text"""
    stop_reason: str | None
    """as the provider reported it"""
    input_tokens: int
    """input tokens as the provider reported them"""
    output_tokens: int
    """output tokens as the provider reported them"""
    cache_read_tokens: int
    """input tokens read from the provider's prompt cache, as it reported them"""
    cache_write_tokens: int
    """input tokens written to the provider's prompt cache, as it reported them"""
    reasoning_tokens: int
    """output tokens spent on reasoning, as the provider reported them"""
    latency_s: float
    """seconds of the answered attempt (earlier attempts and limiter waits not included); of a batched call, from
    its hand-over to the batcher to its result"""
    attempts: int
    """HTTP attempts (retries + 1)"""
    attempt_errors: list[str]
    """errors of the failed attempts (a list; JSON in the dataset's CSV)"""
    request_id: str | None
    """provider request id"""
    model_version: str | None
    """the model id the provider reported"""
    served_by: str | None
    """the upstream provider that answered, as a router reports it (empty for direct APIs)"""
    cost_usd: float
    """cost at the configured prices, in US dollars"""
    status: str
    """`ok`, or `error` for a technical failure"""
    valid: bool | None
    """whether the reply followed the protocol"""
    rule: str | None
    """the rule an invalid reply broke"""
    error: str | None
    """the error shown to the model, or the technical error"""
    resumed: bool
    """replayed from the call journal (paid once, when first sent)"""
    system_fingerprint: str | None
    """OpenAI's backend configuration fingerprint of the reply (empty where the API reports none)"""
    sent_at: datetime | None
    """when the call began, UTC, before its waits on the limiter (empty for a computed reply)"""
    answered_at: datetime | None
    """when its answer came back, UTC"""
    drift: bool | None
    """the provider served the call as another version than the sweep's first answer of its model (empty without a
    reference or a reported version)"""


CALL_SCHEMA = schema_of(CallRow)
_USAGE = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens")
_CALL_FIELDS = tuple(k for k in CALL_SCHEMA if k not in (*_USAGE, "request", "drift"))
References = Mapping[str, Served]
"""``provider:model`` -> what the sweep's first answer of that model reported as served (``Manifest.served``)."""


def drifted(c: CallMeta, references: References) -> bool | None:
    """Whether ``c`` was served otherwise than the sweep's reference for its model (``Served.changed_from``);
    None when there is no reference or the call reports nothing served (a strategy reply, a failed call)."""
    reference, served = references.get(c.key), c.served()
    return None if reference is None or not served.reported() else bool(served.changed_from(reference))


def call_row(c: CallRecord, references: References | None = None) -> CallRow:
    """One row of calls.parquet: the call's fields, its usage as columns, the request as sent (JSON), its drift."""
    return CallRow(**{k: getattr(c, k) for k in _CALL_FIELDS}, **{k: getattr(c.usage, k) for k in _USAGE},
                   request=json.dumps(c.request, ensure_ascii=False), drift=drifted(c, references or {}))


def record_rows(rec: GameRecord, references: References | None = None) -> dict[str, list[dict[str, Any]]]:  # free-form: polars rows
    """Every row one journaled game contributes, by table (each call's drift against ``references``)."""
    return {"games": [game_row(rec)], "turns": turn_rows(rec),
            "calls": [call_row(c, references).model_dump() for c in rec.calls]}


def meanings(table: str) -> dict[str, str]:
    """What each column of ``table`` (games, turns, calls) means, from its row model (``*`` stands for a role)."""
    models: dict[str, type[BaseModel]] = {"games": GameColumns, "turns": TurnColumns, "calls": CallRow}
    row = models[table]
    named = {name: " ".join((f.description or "").split()) for name, f in row.model_fields.items()}
    return named | (GameColumns.PER_ROLE | GameColumns.PEOPLE if row is GameColumns else {})


SCHEMAS: dict[str, dict[str, pl.DataType | type[pl.DataType]]] = {
    "games": GAME_SCHEMA, "turns": TURN_SCHEMA, "calls": CALL_SCHEMA}
"""Each table's columns when it has no rows; games and turns gain a family's columns when they do."""
FIXED = frozenset({"calls"})
"""Tables whose rows always have exactly their schema's columns."""


def rows_frame(name: str, rows: list[dict[str, Any]]) -> pl.DataFrame:  # free-form: rows as polars takes them
    """Rows of table ``name`` as a frame: the fixed schema where a table has one, else inferred over
    every row with the shared columns' types kept."""
    if not rows:
        return pl.DataFrame(schema=SCHEMAS[name])
    if name in FIXED:
        return pl.DataFrame(rows, schema=SCHEMAS[name])
    out = pl.DataFrame(rows, infer_schema_length=None)
    return out.with_columns(pl.col(c).cast(t) for c, t in SCHEMAS[name].items() if c in out.columns)
