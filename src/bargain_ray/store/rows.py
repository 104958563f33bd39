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
from typing import Any, get_args

import polars as pl
from pydantic import BaseModel, ConfigDict

from bargain_ray.core.figures import is_figure, value_of
from bargain_ray.core.records import CallMeta, CallRecord, FamilyFields, GameRecord, Served
from bargain_ray.core.status import Status

IDENTITY = (
    "unit_id", "experiment", "game", "family", "condition", "pairing", "assignment", "cell",
    "seed", "block", "position", "first_speaker",
)
SHARED_SCHEMA = {c: pl.Int64 if c in ("assignment", "seed", "block", "position") else pl.String for c in IDENTITY} | {
    "status": pl.String, "outcome": pl.String, "known": pl.Boolean, "reason": pl.String, "agreement": pl.Boolean,
    "format_failure": pl.Boolean, "technical_failure": pl.Boolean, "technical_pass": pl.Boolean,
    "failed_role": pl.String,
    "rounds": pl.Int64, "rounds_to_agreement": pl.Int64, "calls_attempted": pl.Int64, "total_retries": pl.Int64,
    "invalid_attempts": pl.Int64, "input_tokens": pl.Int64, "output_tokens": pl.Int64, "cost_usd": pl.Float64,
}
"""The columns every game has, with their types (a sweep without games still has them)."""
UTC_TIME = pl.Datetime("us", "UTC")
GAME_SCHEMA = SHARED_SCHEMA | {"unit_hash": pl.String, "outcome_json": pl.String, "started_at": UTC_TIME,
                               "ended_at": UTC_TIME}
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
    row |= side_tokens(rec)
    row["unit_hash"] = unit.hash
    row |= {"started_at": rec.started_at, "ended_at": rec.ended_at}
    for key, value in rec.outcome.scored.written().items():  # the named fields are the shared columns already
        if key not in row and (cell := _cell(value)) is not _SKIP:
            row[key] = cell
    row |= rec.metrics  # the family's figures win: they name each figure once
    row["outcome_json"] = json.dumps(rec.outcome.model_dump(mode="json"), default=str)  # as the journal line holds it
    return row


TURN_SCHEMA = {
    "unit_id": pl.String, "turn": pl.Int64, "role": pl.String, "model": pl.String, "call_ids": pl.List(pl.String),
    "n_attempts": pl.Int64, "n_errors": pl.Int64, "valid": pl.Boolean, "action": pl.String, "message": pl.String,
    "turn_scored": pl.Boolean, "served_by": pl.String, "sent_at": UTC_TIME, "answered_at": UTC_TIME,
}
"""The columns every turn has; a family's action fields and per-turn metrics add their own."""


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

    model_config = ConfigDict(extra="forbid")

    call_id: str
    unit_id: str
    role: str
    turn: int
    repair: int
    provider: str
    model: str
    request: str
    response_text: str | None
    stop_reason: str | None
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    reasoning_tokens: int
    latency_s: float
    attempts: int
    attempt_errors: list[str]
    request_id: str | None
    model_version: str | None
    served_by: str | None
    cost_usd: float
    status: str
    valid: bool | None
    rule: str | None
    error: str | None
    resumed: bool
    system_fingerprint: str | None
    sent_at: datetime | None
    answered_at: datetime | None
    drift: bool | None


_COLUMN_TYPES = {str: pl.String, int: pl.Int64, float: pl.Float64, bool: pl.Boolean, datetime: UTC_TIME,
                 list[str]: pl.List(pl.String)}


def _column_type(annotation: Any) -> pl.DataType | type[pl.DataType]:
    """A row field's column type (None aside: a column holds nulls)."""
    if isinstance(annotation, UnionType):
        (annotation,) = (a for a in get_args(annotation) if a is not NoneType)
    return _COLUMN_TYPES[annotation]


CALL_SCHEMA = {name: _column_type(f.annotation) for name, f in CallRow.model_fields.items()}
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
