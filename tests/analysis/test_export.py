"""The dataset export: seed 002's layout, loadable with polars and with Hugging Face ``datasets``."""

from __future__ import annotations

import json

import datasets
import polars as pl
import pytest
import yaml
from test_analysis import TICKETS, make_sweep

from bargain_ray.analysis.build import analyse
from bargain_ray.analysis.card import prompt_hash
from bargain_ray.analysis.export import by_cell_table, roles_of
from bargain_ray.analysis.report import build_report
from bargain_ray.analysis.sweep import read_sweep


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    sweep = make_sweep(tmp_path_factory.mktemp("sweep"))
    build_report(sweep, resamples=200)
    return sweep / "dataset"


def card_configs(dataset):
    text = (dataset / "README.md").read_text()
    assert text.startswith("---\n")
    return yaml.safe_load(text.split("---\n")[1])["configs"]


def test_layout_and_card(dataset):
    assert sorted(p.name for p in (dataset / "data").iterdir()) == [
        "calls.parquet", "games.csv", "games.parquet", "turns.csv", "turns.parquet"]
    for name in ("metrics_per_game", "metrics_by_cell", "operational"):
        assert (dataset / "metrics" / f"{name}.parquet").exists() and (dataset / "metrics" / f"{name}.csv").exists()
    assert (dataset / "metrics" / "paired_differences.parquet").exists()
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


def test_tables_load_with_polars_and_datasets(dataset, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    for config in card_configs(dataset):
        path = dataset / config["data_files"]
        frame = pl.read_parquet(path.with_suffix(".parquet"))
        kind = path.suffix.removeprefix(".")
        loaded = datasets.load_dataset(kind, data_files=str(path), split="train", cache_dir=str(tmp_path / "hf"))
        assert loaded.num_rows == frame.height > 0
        assert loaded.column_names == frame.columns
    games = datasets.load_dataset(str(dataset), "metrics_per_game", split="train", cache_dir=str(tmp_path / "hf"))
    assert games.num_rows == 12 and "dist_pareto" in games.column_names


def test_by_cell_names_cells_only_when_the_grouping_determines_them(dataset):
    for by, named in ((["game", "condition", "pairing", "assignment", "first_speaker"], True), (["pairing"], False)):
        analysis = analyse(read_sweep(dataset.parent), by=by, resamples=50)
        table = by_cell_table(analysis, roles_of(analysis))
        assert table.height == analysis.by_cell.height  # one row per estimate, never one per cell it spans
        assert table["cell"].is_not_null().all() == named and table["cell"].is_null().all() != named
