"""The one flattening of records into table rows: typed columns, one name per figure."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import polars as pl

from bargain_ray.config import SweepConfig, compose_dict
from bargain_ray.core.figures import exact_of
from bargain_ray.core.records import GameRecord
from bargain_ray.execution.sweep import run_sweep
from bargain_ray.play.rescore import ReplayFile, rescore
from bargain_ray.providers.sim import SimServer, SimSettings
from bargain_ray.store.rows import SHARED_SCHEMA, game_row, rows_frame, turn_rows

DATA = Path(__file__).parents[1] / "data"
MODELS = {"buyer": "model-x", "seller": "model-y"}


def replayed(name: str) -> GameRecord:
    spec = json.loads((DATA / name).read_text())
    spec["unit"] = {"models_by_role": MODELS, "agent_of_role": {"buyer": "A", "seller": "B"}}
    return rescore(ReplayFile.model_validate(spec))


def json_columns(frame: pl.DataFrame, allowed: set[str]) -> list[str]:
    """String columns holding JSON objects or lists, besides ``allowed``."""
    return [c for c, t in frame.schema.items() if t == pl.String and c not in allowed
            and frame[c].drop_nulls().str.starts_with("{").any() | frame[c].drop_nulls().str.starts_with("[").any()]


def test_a_multi_issue_game_row_names_each_figure_once_as_a_number():
    rec = replayed("seed001_replay.json")
    games = rows_frame("games", [game_row(rec)])
    row = games.row(0, named=True)
    assert (row["model_buyer"], row["model_seller"], row["agent_buyer"]) == ("model-x", "model-y", "A")
    assert row["deal_unit_price_usd"] == 64.5 and row["deal_cancellation_fee_pct"] == 37.0
    assert games.schema["deal_unit_price_usd"] == pl.Float64 and games.schema["rounds"] == pl.Int64
    assert row["rounds"] == 9 and row["status"] == "AGREEMENT" and row["agreement"] is True
    # the family's name for the figure, from the exact fraction; the outcome's nested name is not a column
    assert row["utility_buyer"] == float(exact_of(rec.outcome.scored["utilities"]["buyer"])) == 2531 / 40
    assert not any(c.startswith(("utilities_", "gains_")) for c in games.columns)
    assert {"dist_pareto", "pareto_optimal", "efficiency"} <= set(games.columns)  # agreement space via the hook
    assert json_columns(games, {"outcome"}) == []
    assert json.loads(row["outcome"]) == rec.outcome.model_dump(mode="json")  # the full object stays beside the columns
    assert all(games.schema[c] == t for c, t in SHARED_SCHEMA.items())


def test_turn_rows_give_each_action_field_a_column():
    rec = replayed("seed001_replay.json")
    turns = rows_frame("turns", turn_rows(rec))
    offers = turns.filter(pl.col("action") == "OFFER")
    assert offers.height and offers.schema["terms_unit_price_usd"] == pl.Float64
    assert offers["terms_unit_price_usd"][0] == 95.0 and offers["offer_id"][0] == "O1"
    accepted = turns.filter(pl.col("action") == "ACCEPT")
    assert accepted["offer_id"].to_list() == ["O8"]
    assert json_columns(turns, {"fields"}) == []


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
        sweep = SweepConfig.model_validate(compose_dict("config", [
            "+grid=c3_smoke", "provider=sim", f"provider.settings.base_url={url}", f"run.dir={tmp_path}",
            "run.progress=false", "run.workers=1", "run.report=false"]))
        assert run_sweep(sweep) == 0
    games = pl.read_parquet(tmp_path / "games.parquet")
    assert games.schema["model_buyer"] == pl.String and games["model_buyer"].null_count() == 0
    assert {"claude-opus-5-5", "claude-haiku-5-5"} <= set(games["model_buyer"]) | set(games["model_seller"])
    assert games.schema["deal_unit_price_usd"] == pl.Float64 and games.schema["rounds"] == pl.Int64
    deals = games.filter(pl.col("agreement"))
    assert deals.height and deals["deal_unit_price_usd"].null_count() == 0
    assert games.schema["gain_buyer"] == pl.Float64 and json_columns(games, {"outcome"}) == []


def test_read_latest_keeps_each_units_last_record_and_parses_only_those(tmp_path):
    from bargain_ray.store import GameJournal, read_latest

    journal = GameJournal(tmp_path)
    game = rescore(ReplayFile.model_validate_json((DATA / "seed001_replay.json").read_text()))
    records = [game.model_copy(update={"unit": game.unit.model_copy(update={"unit_id": u, "seed": n})})
               for n, u in enumerate(["a", 'b"q', "a", "c"])]  # the seed tells the lines apart
    journal.append_many(records)
    journal.close()
    with (tmp_path / "journal.jsonl").open("ab") as f:
        f.write(b'{"unit": {"unit_id": "d"}, "outc')  # a torn last line, as a kill leaves it
    assert [(r.unit.unit_id, r.unit.seed) for r in read_latest(tmp_path)] == [('b"q', 1), ("a", 2), ("c", 3)]
    assert [r.unit.seed for r in read_latest(tmp_path, only={"a"})] == [2]


def test_a_record_is_journaled_once_as_its_dump_and_reads_back_as_the_model(tmp_path):
    """The worker hands over a model; the journal writes its JSON with the unit id at the line head
    (the index's fast path); the outcome names no identity and reads back into the same model."""
    from bargain_ray.core.records import GameRecord
    from bargain_ray.core.unit import Unit
    from bargain_ray.store import GameJournal, index_latest
    from bargain_ray.store.journal import parse_record

    game = rescore(ReplayFile.model_validate_json((DATA / "seed001_replay.json").read_text()))
    journal = GameJournal(tmp_path)
    journal.append_many([game])
    journal.close()
    line = (tmp_path / "journal.jsonl").read_bytes()
    assert line.startswith(b'{"unit": {"unit_id": "negotiation-c3rep40-20261027-b04-p04-oo-a3", ')
    assert index_latest(tmp_path) == {game.unit.unit_id: 0}
    outcome = json.loads(line)["outcome"]
    assert not set(outcome) & set(Unit.model_fields), "identity lives in the unit only"
    assert list(outcome)[:5] == ["calls_attempted", "repairs_used", "invalid_attempts", "bounds", "status"]
    assert list(outcome)[-1] == "technical_pass" and outcome["utilities"] == game.outcome.scored["utilities"]
    assert json.loads(line)["version"] == 2 and list(json.loads(line))[-1] == "version"
    assert parse_record(line) == game and type(parse_record(line)) is GameRecord


GOLDEN = DATA / "tables_28e62c8"
"""The journal of ``tests/analysis/test_analysis.py``'s scripted sweep (every status) with one re-scored game of
each family appended (``tests/data/*_replay.json``, the observer failure), and the three tables the code of commit
28e62c8 (records read as dicts) built from it with ``read_tables``."""


def test_tables_from_typed_records_equal_those_the_dict_reader_built(tmp_path):
    """The readers yield models, never dicts, and the one flattening gives every table of that commit again:
    each column's name, type and value, in memory and once published; the journal written then still parses."""
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
    for name in TABLES:
        golden = pl.read_parquet(GOLDEN / f"{name}.parquet")
        assert built[name].schema == golden.schema, name
        assert built[name].equals(golden) and published[name].equals(golden), name
