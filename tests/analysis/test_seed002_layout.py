"""Seed 002's dataset, as its card lays it out: a small sweep of the 8-cell bargaining grid on the simulated
provider, exported and loaded config by config with Hugging Face ``datasets`` through the card's own header."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import datasets
import polars as pl
import pytest
import yaml

from bargain_ray.analysis.intervals import MIN_SEEDS
from bargain_ray.analysis.report import build_report
from bargain_ray.config import compose_dict
from bargain_ray.config.schema import Assignment, Design
from bargain_ray.design import resolve
from bargain_ray.execution.sweep import run_sweep
from bargain_ray.games import load_game
from bargain_ray.games.bargaining.metrics import CELL_METRICS, TURN_METRICS

SEED_CONFIGS = [  # seed 002's YAML header, word for word
    {"config_name": "games", "data_files": "data/games.csv", "default": True},
    {"config_name": "turns", "data_files": "data/turns.csv"},
    {"config_name": "metrics_per_game", "data_files": "metrics/metrics_per_game.csv"},
    {"config_name": "metrics_by_cell", "data_files": "metrics/metrics_by_cell.csv"},
    {"config_name": "operational", "data_files": "metrics/operational.csv"},
]
GAMES_COLUMNS = [
    "file", "experiment", "cell", "seed", "rep", "seller_model", "buyer_model", "seller_cost", "buyer_value",
    "available_surplus", "outcome", "price", "round", "seller_payoff", "buyer_payoff", "failed_role",
    "seller_prompt_tokens", "seller_completion_tokens", "buyer_prompt_tokens", "buyer_completion_tokens",
    "total_retries", "prompt_variant", "prompt_hash", "git_commit",
]
TURNS_COLUMNS = [
    "file", "round", "role", "model", "action", "offer", "stated_valuation", "actual_valuation",
    "standing_offer_before", "accepted_price", "n_attempts", "n_errors", "n_illegal", "message", "reasoning_private",
]
CELLS = {"haiku_seller", "haiku_buyer", "haiku_haiku", "llama_llama", "haiku_seller_explicit",
         "haiku_buyer_explicit", "haiku_haiku_explicit", "llama_llama_explicit"}
SEEDS = (1000, 1001)


@pytest.fixture(scope="module")
def sweep(ray_session: str, tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("bargain8")
    overrides = ["+grid=bargaining_8cells", "provider=sim", f"grid.blocks={len(SEEDS)}",
                 f"grid.seeds=[{','.join(map(str, SEEDS))}]", f"run.dir={folder}", "run.progress=false",
                 "run.workers=1"]
    run_sweep(resolve(compose_dict("config", overrides)))
    build_report(folder)
    return folder


@pytest.fixture(scope="module")
def loaded(sweep: Path, tmp_path_factory) -> dict[str, datasets.Dataset]:
    """Every config of the card, loaded by name from the export folder (the card's YAML decides the files)."""
    cache = tmp_path_factory.mktemp("hf")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        mp.setenv("HF_DATASETS_OFFLINE", "1")
        return {c["config_name"]: datasets.load_dataset(str(sweep / "dataset"), c["config_name"], split="train",
                                                        cache_dir=str(cache)) for c in SEED_CONFIGS}


def test_card_header_holds_the_seeds_configs(sweep: Path) -> None:
    text = (sweep / "dataset" / "README.md").read_text()
    configs = yaml.safe_load(text.split("---\n")[1])["configs"]
    assert configs[: len(SEED_CONFIGS)] == SEED_CONFIGS
    metrics = text.split("## Metrics")[1].split("\n## ")[0]
    for role in ("seller", "buyer"):  # how claim drift is aggregated: the sample standard deviation
        assert f"| `{role}_claim_drift` | sample standard deviation (ddof=1)" in metrics


def test_games_and_turns_have_the_cards_columns(loaded: dict[str, datasets.Dataset], sweep: Path) -> None:
    games, turns = loaded["games"].to_polars(), loaded["turns"].to_polars()
    assert games.columns[: len(GAMES_COLUMNS)] == GAMES_COLUMNS
    # the card types every CSV column (a column empty in one chunk must not be typed from it)
    assert loaded["games"].features["failed_role"].dtype == "string"
    assert loaded["turns"].features["valid"].dtype == "bool"
    assert set(TURNS_COLUMNS) <= set(turns.columns)
    assert games.height == 8 * len(SEEDS) and set(games["cell"]) == CELLS and set(games["rep"]) == {0}
    assert set(games["outcome"]) <= {"deal", "no_deal", "format_failure"}
    assert set(games["prompt_variant"]) == {"default", "explicit_objective"}
    assert games["git_commit"].str.len_chars().min() == 40
    # tokens per side are the sums of that side's calls
    calls = pl.read_parquet(sweep / "calls.parquet").join(
        pl.read_parquet(sweep / "dataset" / "data" / "games.parquet").select("unit_id", "file"), on="unit_id")
    sums = calls.group_by("file", "role").agg(pl.col("input_tokens").sum()).filter(pl.col("role") == "seller")
    got = dict(games.select("file", "seller_prompt_tokens").iter_rows())
    assert got == dict(sums.select("file", "input_tokens").iter_rows())
    # each turn names the model of its role, and attempts are replies asked
    models = dict(games.select("file", "seller_model").iter_rows())
    sellers = turns.filter(pl.col("role") == "seller")
    assert all(models[f] == m for f, m in sellers.select("file", "model").iter_rows())
    assert (turns["n_attempts"] == turns["n_errors"] + turns["valid"].cast(pl.Int64)).all()
    assert (turns["n_illegal"] <= turns["n_errors"]).all()


def test_prompt_hash_is_12_hex_of_the_rendered_system_prompt_per_variant(loaded, sweep: Path) -> None:
    manifest = json.loads((sweep / "manifest.json").read_text())
    games = loaded["games"].to_polars()
    hashes = dict(games.select("prompt_variant", "prompt_hash").unique().iter_rows())
    assert len(hashes) == 2 and len(set(hashes.values())) == 2
    for variant, digest12 in hashes.items():
        texts = load_game(manifest["components"][f"game bargaining under condition {variant}"]["config"]).texts()
        system = "\n\n".join(texts[k].text for k in sorted(texts) if k.startswith("brief:"))
        assert digest12 == hashlib.sha256(system.encode()).hexdigest()[:12]
    card = (sweep / "dataset" / "README.md").read_text()
    assert f"condition explicit_objective: `{hashes['explicit_objective']}`" in card


def test_raw_logs_are_named_by_cell_and_seed_with_header_turns_result(loaded, sweep: Path) -> None:
    raw = sweep / "dataset" / "raw"
    assert {p.name for p in raw.iterdir()} == {f"{c}_s{s}.jsonl" for c in CELLS for s in SEEDS}
    games = {g["file"]: g for g in loaded["games"]}
    for path in raw.iterdir():
        records = [json.loads(line) for line in path.read_text().splitlines()]
        header, result, turns = records[0], records[-1], records[1:-1]
        assert [r["record"] for r in records] == ["header"] + ["turn"] * len(turns) + ["result"] and turns
        game = games[f"raw/{path.name}"]
        assert header["log_version"] == 2 and header["cell"] == game["cell"] and header["seed"] == game["seed"]
        for key in ("seller_cost", "buyer_value", "seller_model", "buyer_model", "prompt_variant", "prompt_hash",
                    "git_commit", "rep"):
            assert header[key] == game[key], key
        assert result["outcome"] == game["outcome"]
        for key in ("seller_prompt_tokens", "seller_completion_tokens", "buyer_prompt_tokens",
                    "buyer_completion_tokens"):
            assert result[key] == game[key], key
        assert "reasoning_private" in turns[0]["fields"] and turns[0]["calls"]


def test_metrics_by_cell_has_per_role_rows_for_per_turn_metrics(loaded) -> None:
    cells = loaded["metrics_by_cell"].to_polars()
    assert cells.height == 8 * 20 == 8 * len(CELL_METRICS)
    for cell in CELLS:
        assert cells.filter(pl.col("cell") == cell)["metric"].to_list() == list(CELL_METRICS)
    for metric in TURN_METRICS:
        for role in ("seller", "buyer"):
            rows = cells.filter(pl.col("metric") == f"{role}_{metric}")
            assert rows.height == 8 and set(rows["role"]) == {role}
    # disclosure and leakage are defined on every turn: every cell has an estimate from both seeds, and (fewer seeds
    # than an interval is shown for) no interval
    for metric in ("seller_disclosure", "buyer_disclosure", "seller_msg_leakage", "buyer_msg_leakage"):
        rows = cells.filter(pl.col("metric") == metric)
        assert (rows["n_seeds"] == len(SEEDS)).all() and rows["mean"].is_not_null().all()
        assert len(SEEDS) < MIN_SEEDS and rows["ci_low"].is_null().all() and rows["ci_high"].is_null().all()


def test_per_turn_metrics_aggregate_per_game_then_seed_then_cell(loaded, sweep: Path) -> None:
    turns = loaded["turns"].to_polars().filter(pl.col("turn_scored"))
    expected = (
        turns.filter(pl.col("role") == "buyer").group_by("cell", "seed", "file")
        .agg(pl.col("disclosure").mean()).group_by("cell", "seed").agg(pl.col("disclosure").mean())
        .group_by("cell").agg(pl.col("disclosure").mean())
    )
    cells = loaded["metrics_by_cell"].to_polars().filter(pl.col("metric") == "buyer_disclosure")
    got = dict(cells.select("cell", "mean").iter_rows())
    assert got == pytest.approx(dict(expected.iter_rows()))
    paired = pl.read_parquet(sweep / "dataset" / "metrics" / "paired_differences.parquet")
    assert {f"{r}_{m}" for r in ("seller", "buyer") for m in TURN_METRICS} <= set(paired["metric"])


def test_bargaining_models_are_asked_with_the_seeds_settings(sweep: Path) -> None:
    requests = [json.loads(r) for r in pl.read_parquet(sweep / "calls.parquet")["request"]]
    assert {r["model"] for r in requests} == {"anthropic/claude-haiku-4.5", "meta-llama/llama-3.1-8b-instruct"}
    assert all(r["max_tokens"] == 512 and r["temperature"] == 1.0 for r in requests)


def test_grid_cell_names_must_be_cells_of_the_design() -> None:
    a = Assignment(id=1, roles={"seller": "A", "buyer": "B"})
    design = Design(game="g", conditions=["default"], pairings=["HL"], assignments=[a],
                    cells={"default|HL|a1": "haiku_seller"})
    assert design.cell("default", "HL", a, None) == "haiku_seller"
    with pytest.raises(ValueError, match="not cells of design"):
        Design(game="g", conditions=["default"], pairings=["HL"], assignments=[a], cells={"default|LH|a1": "x"})
    with pytest.raises(ValueError, match="distinct"):
        Design(game="g", conditions=["default", "explicit"], pairings=["HL"], assignments=[a],
               cells={"default|HL|a1": "x", "explicit|HL|a1": "x"})
