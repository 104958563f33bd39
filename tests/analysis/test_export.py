"""The dataset export: seed 002's layout, loadable with polars and with Hugging Face ``datasets``."""

from __future__ import annotations

import json

import datasets
import polars as pl
import pytest
import yaml
from test_analysis import TICKETS, make_sweep

from bargain_ray.analysis import per_game
from bargain_ray.analysis.build import analyse
from bargain_ray.analysis.card import prompt_hash
from bargain_ray.analysis.export import by_cell_table
from bargain_ray.analysis.per_game import metrics_per_turn, sink_turns_in_design_order
from bargain_ray.analysis.report import build_report
from bargain_ray.analysis.sweep import read_sweep
from bargain_ray.store.rows import meanings


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    sweep = make_sweep(tmp_path_factory.mktemp("sweep"))
    build_report(sweep)
    return sweep / "dataset"


def card_configs(dataset):
    text = (dataset / "README.md").read_text()
    assert text.startswith("---\n")
    return yaml.safe_load(text.split("---\n")[1])["configs"]


def test_layout_and_card(dataset):
    assert sorted(p.name for p in (dataset / "data").iterdir()) == [
        "calls.csv", "calls.parquet", "games.csv", "games.parquet", "turns.csv", "turns.parquet"]
    for name in ("metrics_per_game", "metrics_by_cell", "operational", "paired_differences"):
        assert (dataset / "metrics" / f"{name}.parquet").exists() and (dataset / "metrics" / f"{name}.csv").exists()
    configs = {c["config_name"]: c for c in card_configs(dataset)}
    assert configs["games"]["default"] is True
    assert all((dataset / c["data_files"]).exists() for c in configs.values())
    text = (dataset / "README.md").read_text()
    for heading in ("## Structure", "### `metrics_per_game` fields", "## Experimental design", "## Limitations",
                    "## Provenance"):
        assert heading in text
    assert f"Prompt hash for game tickets under condition C3: `{prompt_hash(TICKETS)}`" in text
    assert "| anthropic | model-x | model-x-2026-01-01 |" in text  # the model id as the provider reported it
    assert "1 game(s) ended in a technical failure" in text
    assert json.loads((dataset / "spec" / "manifest.json").read_text())["grid"] == "test"


def card_fields(text: str, config: str) -> dict[str, str]:
    """A config's fields table in the card: column -> meaning."""
    table = text.split(f"### `{config}` fields\n\n", 1)[1].split("\n\n", 1)[0]
    rows = [line.removeprefix("| ").removesuffix(" |").split(" | ", 2) for line in table.splitlines()[2:]]
    return {column.strip("`"): meaning for column, _, meaning in rows}


def test_the_card_describes_each_column_of_the_sweeps_tables_as_its_row_model_does(dataset):
    text = (dataset / "README.md").read_text()
    calls, games, turns = (card_fields(text, c) for c in ("calls", "games", "turns"))
    assert calls == {c: meanings("calls")[c].replace("|", "\\|") for c in calls}, "every calls column, one meaning"
    for fields, said in ((games, meanings("games")), (turns, meanings("games") | meanings("turns"))):
        assert {c: t for c, t in fields.items() if c in said} == {c: said[c].replace("|", "\\|") for c in fields
                                                                  if c in said}
    assert {"sent_at", "answered_at"} <= set(turns) and "family figure" not in games["started_at"]


def test_raw_jsonl_header_turns_result(dataset):
    files = sorted((dataset / "raw").glob("*.jsonl"))
    assert len(files) == 12
    for path in files:
        records = [json.loads(line) for line in path.read_text().splitlines()]
        header, result, turns = records[0], records[-1], records[1:-1]
        assert header["record"] == "header" and result["record"] == "result"
        assert {t["record"] for t in turns} <= {"turn"} and header["log_version"] == 2
        assert header["unit"]["unit_id"] == result["unit_id"] and header["file"] == f"raw/{path.name}"
        assert path.stem == f"{header['cell'].replace('|', '_')}_s{header['seed']}"
        assert header["game_config"]["name"] == "tickets"
        calls = [c["call_id"] for t in turns for c in t["calls"]]
        assert len(calls) == result["calls_attempted"]  # every call, invalid and failed ones included
    tech = next(f for f in files if f.name == "C3_YX_a1_seller_s3.jsonl")
    last = [json.loads(line) for line in tech.read_text().splitlines()][-2]
    assert last["unfinished"] and last["calls"][0]["status"] == "error"


def load(folder, config: str, cache) -> datasets.Dataset:
    return datasets.load_dataset(str(folder), config, split="train", cache_dir=str(cache))


def test_every_config_of_the_card_loads_by_name(dataset, tmp_path, monkeypatch):
    """Issue 18: ``calls`` and ``paired_differences`` raised DatasetGenerationError (parquet read as CSV). Each
    config, by the name the card gives it, into a cache of its own: the rows and columns of the table beside it."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    configs = card_configs(dataset)
    assert [c["config_name"] for c in configs] == ["games", "turns", "metrics_per_game", "metrics_by_cell", "operational",
                                                   "calls", "paired_differences", "head_to_head", "metrics_per_turn"]  # leakage per turn
    for config in configs:
        loaded = load(dataset, config["config_name"], tmp_path / config["config_name"])
        frame = pl.read_parquet((dataset / config["data_files"]).with_suffix(".parquet"))
        assert loaded.num_rows == frame.height > 0 and loaded.column_names == frame.columns, config
    calls = load(dataset, "calls", tmp_path / "again").to_polars()
    assert json.loads(calls["request"][0])["system"].startswith("You negotiate")  # the request as sent, as JSON
    assert calls.schema["input_tokens"] == pl.Int64 and calls.schema["latency_s"] == pl.Float64
    games = load(dataset, "metrics_per_game", tmp_path / "m")
    assert games.num_rows == 12 and "dist_pareto" in games.column_names


def test_two_exports_never_collide_in_one_cache(tmp_path, monkeypatch):
    """Issue 18: every export folder is called ``dataset``; ``datasets``' cache returned another export's rows for a
    smaller one. The card names each config's data digest: one cache, two sweeps, each its own rows."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    big = make_sweep(tmp_path / "big")
    build_report(big)
    small = make_sweep(tmp_path / "small")
    lines = (small / "journal.jsonl").read_bytes().splitlines(keepends=True)
    (small / "journal.jsonl").write_bytes(b"".join(lines[1:]))  # the same columns, one deal fewer
    for stale in small.glob("*.parquet"):
        stale.unlink()  # the tables of 12 games go: read from the journal's 11
    build_report(small)
    cache = tmp_path / "one-cache"
    assert load(big / "dataset", "games", cache).num_rows == 12
    assert load(small / "dataset", "games", cache).num_rows == 11
    assert load(big / "dataset", "games", cache).num_rows == 12
    header = yaml.safe_load((small / "dataset" / "README.md").read_text().split("---\n")[1])
    assert {i["dataset_name"] for i in header["dataset_info"]} == {"bargain_ray_small"}


SWEEP_TABLES = {"games": "data/games", "turns": "data/turns", "calls": "data/calls"}


def test_the_dataset_renames_nothing_of_the_sweeps_tables(dataset):
    """One name per concept: every column of the sweep's games, turns and calls tables has the same name in the
    dataset's table of that name (which only adds columns: the raw file, prompt hash, ...), in its parquet and
    its CSV; the outcome object (``outcome_json``) is left to ``raw/``."""
    sweep = dataset.parent
    for name, stem in SWEEP_TABLES.items():
        source = pl.read_parquet(sweep / f"{name}.parquet").drop("outcome_json", strict=False)
        exported = pl.read_parquet(dataset / f"{stem}.parquet")
        csv_header = (dataset / f"{stem}.csv").read_text().splitlines()[0].split(",")
        assert set(source.columns) <= set(exported.columns) == set(csv_header), name
        keyed = exported.select(source.columns).sort("unit_id", *(["turn"] if name == "turns" else []),
                                                    *(["call_id"] if name == "calls" else []))
        base = source.sort("unit_id", *(["turn"] if name == "turns" else []), *(["call_id"] if name == "calls" else []))
        if name == "turns":
            base = base.with_columns(pl.col("call_ids").list.join(","))
        assert keyed.equals(base), name
    games = pl.read_parquet(dataset / "data" / "games.parquet")
    assert {"buyer_model", "seller_model", "outcome", "total_retries", "buyer_prompt_tokens"} <= set(games.columns)
    assert not {"model_buyer", "repairs_used"} & set(games.columns)


def test_by_cell_names_cells_only_when_the_grouping_determines_them(dataset):
    for by, named in ((["game", "condition", "pairing", "assignment", "first_speaker"], True), (["pairing"], False)):
        analysis = analyse(read_sweep(dataset.parent), by=by)
        table = by_cell_table(analysis, analysis.sweep.roles())
        assert table.height == analysis.by_cell.height  # one row per estimate, never one per cell it spans
        assert table["cell"].is_not_null().all() == named and table["cell"].is_null().all() != named


def test_per_turn_rows_are_written_in_design_order_a_part_of_the_games_at_a_time(tmp_path, monkeypatch):
    """The per-turn table is sorted a part of the games at a time (its memory a part's): parts of one game each
    give exactly the table one sort of the whole gives."""
    sweep = read_sweep(make_sweep(tmp_path / "sweep"))
    turns = metrics_per_turn(sweep)
    whole = turns.sort("block", "position", "unit_id", "turn", nulls_last=True).collect()
    monkeypatch.setattr(per_game, "PART_GAMES", 1)
    sink_turns_in_design_order(turns.reverse(), sweep.scan("games"), tmp_path / "per_turn.parquet")
    assert whole["unit_id"].n_unique() > 2, "several games, so several parts"
    assert pl.read_parquet(tmp_path / "per_turn.parquet").equals(whole)
