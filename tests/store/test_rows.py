"""The one flattening of records into table rows: typed columns, one name per figure."""

from __future__ import annotations

import gzip
import json
from datetime import UTC, datetime
from pathlib import Path

import polars as pl

from bargain_ray.config import compose_dict
from bargain_ray.core.figures import exact_of
from bargain_ray.core.records import CallRecord, GameRecord, Served, Usage
from bargain_ray.design import resolve
from bargain_ray.execution.sweep import run_sweep
from bargain_ray.games.multi_issue.records import MultiIssueOutcome
from bargain_ray.play.rescore import ReplayFile, replay_transcript
from bargain_ray.providers.sim import SimServer, SimSettings
from bargain_ray.store.rows import (
    CALL_SCHEMA,
    SHARED_SCHEMA,
    UTC_TIME,
    CallRow,
    GameColumns,
    SharedColumns,
    TurnColumns,
    call_row,
    game_row,
    meanings,
    rows_frame,
    shared_columns,
    turn_rows,
)

DATA = Path(__file__).parents[1] / "data"
MODELS = {"buyer": "model-x", "seller": "model-y"}


def replayed(name: str) -> GameRecord:
    spec = json.loads((DATA / name).read_text())
    spec["unit"] = {"models_by_role": MODELS, "agent_of_role": {"buyer": "A", "seller": "B"}}
    return replay_transcript(ReplayFile.model_validate(spec))


def json_columns(frame: pl.DataFrame, allowed: set[str]) -> list[str]:
    """String columns holding JSON objects or lists, besides ``allowed``."""
    return [c for c, t in frame.schema.items() if t == pl.String and c not in allowed
            and frame[c].drop_nulls().str.starts_with("{").any() | frame[c].drop_nulls().str.starts_with("[").any()]


def test_a_multi_issue_game_row_names_each_figure_once_as_a_number():
    rec = replayed("seed001_replay.json")
    games = rows_frame("games", [game_row(rec)])
    row = games.row(0, named=True)
    assert (row["buyer_model"], row["seller_model"], row["buyer_agent"]) == ("model-x", "model-y", "A")
    assert row["deal_unit_price_usd"] == 64.5 and row["deal_cancellation_fee_pct"] == 37.0
    assert games.schema["deal_unit_price_usd"] == pl.Float64 and games.schema["rounds"] == pl.Int64
    assert row["rounds"] == 9 and row["status"] == "AGREEMENT" and row["agreement"] is True
    # the family's name for the figure, from the exact fraction; the outcome's nested name is not a column
    assert row["utility_buyer"] == float(exact_of(MultiIssueOutcome.of(rec.outcome.scored).utilities["buyer"])) == 2531 / 40
    assert not any(c.startswith(("utilities_", "gains_")) for c in games.columns)
    assert {"dist_pareto", "pareto_optimal", "efficiency"} <= set(games.columns)  # agreement space via the hook
    assert json_columns(games, {"outcome_json"}) == [] and row["outcome"] == "deal"
    assert json.loads(row["outcome_json"]) == rec.outcome.model_dump(mode="json")  # the full object stays beside the columns
    assert all(games.schema[c] == t for c, t in SHARED_SCHEMA.items())


def test_each_table_means_what_its_row_model_says_of_every_column_it_always_has():
    """A column's meaning is written once, on its row model, for the card and the per-game table: every column a
    table always has is a field of that model, and each field says what it means."""
    rec = replayed("seed001_replay.json")
    assert list(shared_columns(rec)) == list(SharedColumns.model_fields) == list(SHARED_SCHEMA)
    assert set(GameColumns.model_fields) <= set(game_row(rec))
    assert all(set(TurnColumns.model_fields) <= set(row) for row in turn_rows(rec))
    assert list(call_row(rec.calls[0]).model_dump()) == list(CallRow.model_fields)
    for table, row in (("games", GameColumns), ("turns", TurnColumns), ("calls", CallRow)):
        said = meanings(table)
        assert set(row.model_fields) <= set(said) and all(said.values()), table
        assert all("\n" not in text and "  " not in text for text in said.values()), "one line each, for the card"
    roles = {c for c in game_row(rec) if c.startswith(("buyer_", "seller_")) and c.endswith(("_model", "_agent",
                                                                                             "_tokens"))}
    assert {c.replace("buyer", "*").replace("seller", "*") for c in roles} == set(GameColumns.PER_ROLE)


def test_a_call_row_is_a_model_of_the_calls_schema():
    """Issue 17: ``call_row`` returns a ``CallRow`` (not a dict), whose fields are calls.parquet's columns in order;
    the request is the JSON sent, usage is flat, drift is held against the reference of the call's model."""
    call = CallRecord(call_id="u1-k01", unit_id="u1", role="buyer", turn=0, repair=0, provider="anthropic", model="m",
                      request={"model": "m", "messages": [{"role": "user", "content": "prix: 5 €"}]},
                      usage=Usage(input_tokens=12, output_tokens=3, cache_read_tokens=1), latency_s=0.5,
                      attempt_errors=["529"], attempts=2, model_version="m-2", cost_usd=0.01,
                      sent_at=datetime(2026, 12, 1, tzinfo=UTC), answered_at=datetime(2026, 12, 1, 0, 0, 1, tzinfo=UTC))
    row = call_row(call, {"anthropic:m": Served(model_version="m-1")})
    assert isinstance(row, CallRow) and list(CallRow.model_fields) == list(CALL_SCHEMA)
    assert row.request == '{"model": "m", "messages": [{"role": "user", "content": "prix: 5 €"}]}'
    assert (row.input_tokens, row.output_tokens, row.cache_read_tokens, row.reasoning_tokens) == (12, 3, 1, 0)
    assert row.drift is True and call_row(call).drift is None and row.attempt_errors == ["529"]
    calls = rows_frame("calls", [row.model_dump()])
    assert calls.schema == pl.Schema(CALL_SCHEMA) and calls["sent_at"][0] == call.sent_at
    assert calls.row(0, named=True) == row.model_dump()


def test_turn_rows_give_each_action_field_a_column():
    rec = replayed("seed001_replay.json")
    turns = rows_frame("turns", turn_rows(rec))
    offers = turns.filter(pl.col("action") == "OFFER")
    assert offers.height and offers.schema["terms_unit_price_usd"] == pl.Float64
    assert offers["terms_unit_price_usd"][0] == 95.0 and offers["offer_id"][0] == "O1"
    accepted = turns.filter(pl.col("action") == "ACCEPT")
    assert accepted["offer_id"].to_list() == ["O8"]
    assert json_columns(turns, set()) == [] and "terms" not in turns.columns


def test_per_turn_metrics_sit_on_the_turn_they_score():
    rec = replayed("bargaining_replay.json")
    turns = rows_frame("turns", turn_rows(rec))
    scored = turns.filter(pl.col("turn_scored"))
    assert scored.height == len(rec.turn_metrics) > 0
    assert scored.schema["stated_valuation"].is_numeric() and scored.schema["self_serving_bias"] == pl.Float64
    for m in rec.turn_metrics:
        row = scored.filter(pl.col("turn") == m["turn"]).row(0, named=True)
        assert row["self_serving_bias"] == m["self_serving_bias"] and row["role"] == m["role"]


def test_c3_smoke_rehearsal_games_table_is_typed(ray_session: str, tmp_path: Path) -> None:
    """Issue 12: a researcher reads who bought, the price and the rounds without decoding JSON."""
    server = SimServer(SimSettings())
    with server as url:
        sweep = resolve(compose_dict("config", [
            "+grid=c3_smoke", "provider=sim", f"provider.settings.base_url={url}", f"run.dir={tmp_path}",
            "run.progress=false", "run.workers=1", "run.report=false"]))
        assert run_sweep(sweep) == 0
    games = pl.read_parquet(tmp_path / "games.parquet")
    assert games.schema["buyer_model"] == pl.String and games["buyer_model"].null_count() == 0
    assert {"claude-opus-5-5", "claude-haiku-5-5"} <= set(games["buyer_model"]) | set(games["seller_model"])
    assert games.schema["deal_unit_price_usd"] == pl.Float64 and games.schema["rounds"] == pl.Int64
    deals = games.filter(pl.col("agreement"))
    assert deals.height and deals["deal_unit_price_usd"].null_count() == 0
    assert games.schema["gain_buyer"] == pl.Float64 and json_columns(games, {"outcome_json"}) == []


def test_read_latest_keeps_each_units_last_record_and_parses_only_those(tmp_path):
    from bargain_ray.store import GameJournal, read_latest

    journal = GameJournal(tmp_path)
    game = replay_transcript(ReplayFile.model_validate_json((DATA / "seed001_replay.json").read_text()))
    records = [game.model_copy(update={"unit": game.unit.model_copy(update={"unit_id": u, "seed": n})})
               for n, u in enumerate(["a", 'b"q', "a", "c", "e" * 300])]  # the seed tells the lines apart
    journal.append_many(records)
    journal.close()
    with (tmp_path / "journal.jsonl").open("ab") as f:
        f.write(b'{"unit": {"unit_id": "d"}, "outc')  # a torn last line, as a kill leaves it
    assert [(r.unit.unit_id, r.unit.seed) for r in read_latest(tmp_path)] == [('b"q', 1), ("a", 2), ("c", 3),
                                                                             ("e" * 300, 4)]  # an id past the head
    assert [r.unit.seed for r in read_latest(tmp_path, only={"a"})] == [2]


def test_a_record_is_journaled_once_as_its_dump_and_reads_back_as_the_model(tmp_path):
    """The worker hands over a model; the journal writes its JSON with the unit id at the line head
    (the index's fast path); the outcome names no identity and reads back into the same model."""
    from bargain_ray.core.records import GameRecord
    from bargain_ray.core.unit import Unit
    from bargain_ray.store import GameJournal, index_latest
    from bargain_ray.store.journal import parse_record
    from bargain_ray.store.jsonl import JOURNAL_VERSION

    game = replay_transcript(ReplayFile.model_validate_json((DATA / "seed001_replay.json").read_text()))
    journal = GameJournal(tmp_path)
    journal.append_many([game])
    journal.close()
    line = (tmp_path / "journal.jsonl").read_bytes()
    assert line.startswith(b'{"unit": {"unit_id": "negotiation-c3rep40-20261027-b04-p04-oo-a3", ')
    assert index_latest(tmp_path) == {game.unit.unit_id: 0}
    outcome = json.loads(line)["outcome"]
    assert not set(outcome) & set(Unit.model_fields), "identity lives in the unit only"
    assert list(outcome)[:5] == ["calls_attempted", "repairs_used", "invalid_attempts", "bounds", "status"]
    assert list(outcome)[-1] == "technical_pass" and outcome["utilities"] == game.outcome.scored.model_dump(mode="json")["utilities"]
    assert json.loads(line)["version"] == JOURNAL_VERSION and list(json.loads(line))[-1] == "version"
    assert parse_record(line) == game and type(parse_record(line)) is GameRecord


GOLDEN = DATA / "tables_28e62c8"
"""The journal of ``tests/analysis/test_analysis.py``'s scripted sweep (every status) with one re-scored game of
each family appended (``tests/data/*_replay.json``, the observer failure), and the three tables the code of commit
28e62c8 (records read as dicts) built from it with ``read_tables``. Kept as that commit wrote them: today's tables
are that data under one naming scheme (``renamed``), the mapping written out below."""
RENAMED = {
    "games": {"repairs_used": "total_retries", "outcome": "outcome_json"},
    "turns": {"attempts": "n_attempts"},
    "calls": {},
}
"""old name -> new name; besides these, ``model_<role>`` -> ``<role>_model`` and ``agent_<role>`` -> ``<role>_agent``."""
DROPPED_NULL = {"games": ("deal", "gains", "utilities"), "turns": ("terms", "deal"), "calls": ()}
"""Columns null in every row of 28e62c8's tables: placeholders of fields whose values are nested (a deal's terms are
``deal_<term>`` / ``terms_<term>``, gains ``gain_<role>``), so they could never hold a value."""
ADDED_NULL = {
    "games": {"started_at": UTC_TIME, "ended_at": UTC_TIME},
    "turns": {"sent_at": UTC_TIME, "answered_at": UTC_TIME},
    "calls": {"system_fingerprint": pl.String, "sent_at": UTC_TIME, "answered_at": UTC_TIME, "drift": pl.Boolean},
}
"""Columns added since 28e62c8 that its journal has no value for, typed (issue 21.2): when a game started and ended,
when a turn's calls were sent and answered, a call's times, OpenAI's fingerprint and its drift from the sweep's
reference (no manifest here, so none): null in every row of a journal written before they were kept."""


def renamed(name: str, old: pl.DataFrame) -> dict[str, str]:
    mapping = dict(RENAMED[name])
    for c in old.columns:
        for prefix in ("model_", "agent_"):
            if name == "games" and c.startswith(prefix):
                mapping[c] = f"{c.removeprefix(prefix)}_{prefix.rstrip('_')}"
    return mapping


def old_as_new(tables: dict[str, pl.DataFrame]) -> dict[str, pl.DataFrame]:
    """28e62c8's tables under today's names, with the columns added since computed from their own data:
    ``outcome`` from ``status`` (seed 002's words), ``failed_role`` where a family did not record it (the role of a
    game's last turn when it is invalid), each side's tokens from ``calls`` (0 for a side that played and was
    never asked), each turn's model from ``games`` and its
    invalid replies from ``calls``. The ``fields`` JSON of a turn is checked apart (``test_every_turn_field_...``)."""
    from bargain_ray.store.rows import OUTCOMES

    games, turns, calls = tables["games"], tables["turns"], tables["calls"]
    for name in tables:
        for c in DROPPED_NULL[name]:
            assert tables[name][c].null_count() == tables[name].height, (name, c)
    last_invalid = (turns.group_by("unit_id", maintain_order=True).agg(pl.col("role", "valid").last())
                    .select("unit_id", pl.when(~pl.col("valid")).then("role").alias("last_invalid")))
    sides = calls.group_by("unit_id", "role", maintain_order=True).agg(
        pl.col("input_tokens").sum().alias("prompt_tokens"), pl.col("output_tokens").sum().alias("completion_tokens"))
    wide = sides.pivot(on="role", index="unit_id", values=["prompt_tokens", "completion_tokens"])
    wide = wide.rename({c: f"{c.split('_', 2)[2]}_{'_'.join(c.split('_', 2)[:2])}"  # prompt_tokens_<role> -> <role>_prompt_tokens
                        for c in wide.columns if c != "unit_id"})
    roles = [c.removeprefix("model_") for c in games.columns if c.startswith("model_")]
    new_games = (
        games.drop(*DROPPED_NULL["games"]).rename(renamed("games", games))
        .join(last_invalid, on="unit_id", how="left", maintain_order="left")
        .join(wide, on="unit_id", how="left", maintain_order="left")
        .with_columns(
            pl.col("status").replace_strict({str(k): v for k, v in OUTCOMES.items()}).alias("outcome"),
            pl.coalesce("failed_role", "last_invalid").alias("failed_role"),
            *(pl.when(pl.col(f"{r}_model").is_not_null()).then(pl.col(f"{r}_{k}_tokens").fill_null(0))
              .otherwise(pl.col(f"{r}_{k}_tokens")) for r in roles for k in ("prompt", "completion")),
        ).drop("last_invalid")
    )
    models = games.unpivot(index="unit_id", on=[c for c in games.columns if c.startswith("model_")],
                           variable_name="role", value_name="model")
    models = models.with_columns(pl.col("role").str.strip_prefix("model_")).drop_nulls("model")
    errors = (turns.select("unit_id", "turn", pl.col("call_ids").alias("call_id")).explode("call_id")
              .join(calls.select("call_id", "valid"), on="call_id", how="left")
              .group_by("unit_id", "turn").agg((pl.col("valid") == False).sum().cast(pl.Int64).alias("n_errors")))  # noqa: E712
    new_turns = (
        turns.drop(*DROPPED_NULL["turns"], "fields").rename(renamed("turns", turns))
        .join(models, on=["unit_id", "role"], how="left", maintain_order="left")
        .join(errors, on=["unit_id", "turn"], how="left", maintain_order="left")
        .with_columns(pl.col("n_errors").fill_null(0))
    )
    return {name: frame.with_columns(pl.lit(None, dtype).alias(c) for c, dtype in ADDED_NULL[name].items())
            for name, frame in (("games", new_games), ("turns", new_turns), ("calls", calls))}


def same_table(built: pl.DataFrame, expected: pl.DataFrame, name: str) -> None:
    assert set(built.columns) == set(expected.columns), (name, set(built.columns) ^ set(expected.columns))
    ordered = expected.select(built.columns)
    assert built.schema == ordered.schema, name
    differ = [c for c in built.columns if not built[c].equals(ordered[c])]
    assert not differ, (name, differ)


def test_tables_from_typed_records_equal_those_the_dict_reader_built(tmp_path):
    """The readers yield models, never dicts, and the one flattening gives every table of that commit again under
    today's names: each column's type and value, in memory and once published; the journal written then still
    parses. A column renamed, dropped or added since is in the mapping above, and proved the same data there."""
    from bargain_ray.store import TABLES, read_heads, read_records, read_tables, write_tables

    (tmp_path / "journal.jsonl").write_bytes(gzip.decompress((GOLDEN / "journal.jsonl.gz").read_bytes()))
    records = list(read_records(tmp_path))
    assert len(records) == 17 and all(type(r) is GameRecord for r in records)
    assert {r.unit.family for r in records} == {"multi_issue", "bargaining", "freetext", "scorable"}
    heads = [(h.unit.unit_id, h.unit.hash, h.outcome.known, h.outcome.reason) for h in read_heads(tmp_path)]
    assert heads == [(r.unit.unit_id, r.unit.hash, r.outcome.known, r.outcome.reason) for r in records]
    built = read_tables(tmp_path)  # nothing published yet: rows built in memory from the journal
    write_tables(tmp_path)
    published = read_tables(tmp_path)
    expected = old_as_new({name: pl.read_parquet(GOLDEN / f"{name}.parquet") for name in TABLES})
    for name in TABLES:
        same_table(built[name], expected[name], name)
        same_table(published[name], expected[name], name)


def test_every_turn_field_of_the_old_json_is_a_typed_column(tmp_path):
    """28e62c8 kept each turn's fields as a JSON string (numbers as strings: ``"unit_price_usd": "95"``); today each
    field is its own column: a scalar as itself, a dict as ``<field>_<key>`` with decimal strings as numbers, an
    empty field as nothing. Every value of every old JSON is found there, so dropping the JSON lost nothing."""
    from bargain_ray.store import read_tables

    (tmp_path / "journal.jsonl").write_bytes(gzip.decompress((GOLDEN / "journal.jsonl.gz").read_bytes()))
    turns = read_tables(tmp_path)["turns"]
    old = pl.read_parquet(GOLDEN / "turns.parquet")
    checked = 0
    for was, now in zip(old.iter_rows(named=True), turns.iter_rows(named=True), strict=True):
        for key, value in json.loads(was["fields"]).items():
            subs = value.items() if isinstance(value, dict) else [(None, value)]
            for sub, v in subs:
                column = key if sub is None else f"{key}_{sub}"
                if v is None:
                    assert now.get(column) is None, column
                elif not isinstance(v, list):
                    number = float(v) if sub is not None and isinstance(v, str) and v.replace(".", "", 1).lstrip("-").isdigit() else v
                    assert now[column] == number and type(now[column]) is type(number), (column, now[column], v)
                    checked += 1
    assert checked > 500
    assert json_columns(turns, set()) == [] and "fields" not in turns.columns


def test_no_column_is_null_in_every_row_but_shared_ones_and_declared_figures(tmp_path):
    """Issue 18: turns.parquet had a ``terms`` column null in 5,280 of 5,280 rows (the terms are ``terms_<term>``).
    A column exists where a value can: every column null in every row is one every game has (``failed_role`` when
    no side failed) or a figure the family computes (its empty denominator, e.g. no game without gains from trade)."""
    from bargain_ray.store import read_records, read_tables
    from bargain_ray.store.rows import SCHEMAS

    (tmp_path / "journal.jsonl").write_bytes(gzip.decompress((GOLDEN / "journal.jsonl.gz").read_bytes()))
    records = list(read_records(tmp_path))
    declared = {k for r in records for k in r.metrics} | {k for r in records for m in r.turn_metrics for k in m}
    for name, table in read_tables(tmp_path).items():
        empty = {c for c in table.columns if table[c].null_count() == table.height}
        assert empty <= set(SCHEMAS[name]) | declared, (name, empty - set(SCHEMAS[name]) - declared)
    old = pl.read_parquet(GOLDEN / "turns.parquet")
    assert old["terms"].null_count() == old.height  # what 28e62c8 wrote
