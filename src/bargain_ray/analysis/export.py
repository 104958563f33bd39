"""The dataset export in seed 002's layout: raw JSONL per game, every config as CSV (parquet beside), and the card.

``raw/{cell}_s{seed}.jsonl`` is the archival truth (a ``header`` record, one ``turn`` record per turn with its
calls, a ``result`` record); ``data/`` and ``metrics/`` are derived and can be regenerated from it. Every
table is a lazy frame over the store's tables sunk to disk, and raw files are written one journaled record at
a time, so the export's memory does not grow with the number of games. Every family gets the same shape
(games / turns / metrics / raw), and a column has the name it has in the sweep's parquet tables (seed 002's,
where its card names one: ``store.rows``); the export only adds columns (``file``, ``rep``, ``prompt_hash``, ...).

Every config is CSV, ours too (``calls``, ``paired_differences``, ``metrics_per_turn``): ``datasets`` picks one
reader for a whole folder from its first config's files, so a parquet config beside CSV ones cannot load by
name. A list column (``attempt_errors``) is JSON in the CSV and a list in the parquet beside it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import polars as pl

from bargain_ray.analysis.build import Analysis
from bargain_ray.analysis.card import LOG_VERSION, Written, card, prompt_hashes, sweep_commit
from bargain_ray.analysis.per_game import (cell_metrics, ground_truth, illegal_rules, in_design_order,
                                           sink_turns_in_design_order)
from bargain_ray.analysis.sample import raw_scope
from bargain_ray.analysis.transcript import shown_turns
from bargain_ray.core.hashing import file_digest
from bargain_ray.core.records import GameRecord
from bargain_ray.store import MANIFEST
from bargain_ray.store.rows import OUTCOMES, side_tokens

CARD_TABLES = {
    "games": "data/games", "turns": "data/turns", "metrics_per_game": "metrics/metrics_per_game",
    "metrics_by_cell": "metrics/metrics_by_cell", "operational": "metrics/operational",
}
"""Seed 002's five configs, in its order."""
EXTRA_TABLES = {
    "calls": "data/calls", "metrics_per_turn": "metrics/metrics_per_turn",
    "paired_differences": "metrics/paired_differences", "head_to_head": "metrics/head_to_head",
}
"""Ours, beyond the seed."""
GAMES_ORDER = ("file", "experiment", "cell", "seed", "rep", "{role}_model", "seller_cost", "buyer_value",
               "available_surplus", "outcome", "price", "round", "seller_payoff", "buyer_payoff", "failed_role",
               ("{role}_prompt_tokens", "{role}_completion_tokens"), "total_retries", "prompt_variant", "prompt_hash",
               "git_commit")
TURNS_ORDER = ("file", "cell", "seed", "rep", "turn", "round", "role", "model", "action", "offer", "stated_valuation",
               "actual_valuation", "standing_offer_before", "accepted_price", "n_attempts", "n_errors", "n_illegal",
               "message", "reasoning_private")
KEY_ORDER = ("file", "cell", "seed", "rep")
"""Seed 002's columns first, in the card's order (those a family has); every other column follows."""


def file_keys(analysis: Analysis) -> pl.DataFrame:
    """unit_id -> ``file`` (``raw/{cell}_s{seed}.jsonl``) and ``rep`` (0, 1, ... among the games of one cell and
    seed, in design order). The name is ours where the seed's is not unique: the game is prefixed when a sweep
    has several, ``_r{rep}`` added from the second game of a cell and seed, characters other than letters,
    digits, ``_.-`` become ``_``."""
    g = analysis.sweep.scan("games").select("unit_id", "game", "cell", "seed", "block", "position")
    several = g.select(pl.col("game").n_unique()).collect().item() > 1
    safe = pl.col("cell").cast(pl.String).fill_null("cell").str.replace_all(r"[^A-Za-z0-9_.\-]+", "_")
    prefix = pl.col("game").cast(pl.String).str.replace_all(r"[^A-Za-z0-9_.\-]+", "_") + "_" if several else pl.lit("")
    return (
        in_design_order(g)
        .with_columns(rep=pl.int_range(pl.len()).over("game", "cell", "seed"))
        .with_columns(file=pl.concat_str([
            pl.lit("raw/"), prefix, safe, pl.lit("_s"), pl.col("seed").cast(pl.String),
            pl.when(pl.col("rep") > 0).then(pl.lit("_r") + pl.col("rep").cast(pl.String)).otherwise(pl.lit("")),
            pl.lit(".jsonl")]))
        .select("unit_id", "file", "rep").collect()
    )


def _ordered(frame: pl.LazyFrame, order: tuple[str | tuple[str, ...], ...], roles: list[str]) -> pl.LazyFrame:
    """The columns of ``order`` first (``{role}`` expanded for each role; a tuple is expanded role by role)."""
    names = frame.collect_schema().names()
    groups = [c if isinstance(c, tuple) else (c,) for c in order]
    first = [c.format(role=r) for g in groups for r in (roles if "{role}" in g[0] else [None]) for c in g]
    first = [c for c in dict.fromkeys(first) if c in names]
    return frame.select(*first, *(c for c in names if c not in first))


def games_table(analysis: Analysis, keys: pl.DataFrame, roles: list[str]) -> pl.LazyFrame:
    """One row per game with seed 002's columns first: the games table as the sweep holds it (``outcome``, models
    and tokens per side, ``total_retries``), with the raw file, the prompt variant and its hash, the commit."""
    s = analysis.sweep
    games = s.scan("games")
    names = games.collect_schema().names()
    variant = pl.coalesce("prompt_variant", "condition") if "prompt_variant" in names else pl.col("condition")
    frame = (
        games.drop("outcome_json", strict=False)
        .join(keys.lazy(), on="unit_id", how="left", maintain_order="left")
        .join(prompt_hashes(analysis).lazy(), on=["game", "condition"], how="left", maintain_order="left")
        .with_columns(variant.alias("prompt_variant"), pl.lit(sweep_commit(analysis)).alias("git_commit"))
    )
    return _ordered(in_design_order(frame), GAMES_ORDER, roles)


def turns_table(analysis: Analysis, keys: pl.DataFrame, roles: list[str]) -> pl.LazyFrame:
    """One row per turn with seed 002's columns first: the turns table as the sweep holds it (the model that
    answered, ``n_attempts``, ``n_errors``), with ``n_illegal`` (invalid replies that proposed a move the
    protocol forbids, as the family's ``ILLEGAL_RULES`` say) and the calls' ids comma-separated."""
    s = analysis.sweep
    games = s.scan("games")
    families = games.select(pl.col("family").unique()).collect()["family"].to_list()
    illegal = pl.LazyFrame(
        [{"family": f, "rule": r, "illegal": True} for f in families for r in sorted(illegal_rules(f))],
        schema={"family": pl.String, "rule": pl.String, "illegal": pl.Boolean})
    turns = s.scan("turns")
    counts = (
        turns.select("unit_id", "turn", pl.col("call_ids").alias("call_id")).explode("call_id")
        .join(s.scan("calls").select("call_id", "valid", "rule"), on="call_id", how="inner")
        .join(games.select("unit_id", "family"), on="unit_id", how="left")
        .join(illegal, on=["family", "rule"], how="left")
        .group_by("unit_id", "turn")
        .agg(((pl.col("valid") == False) & pl.col("illegal").fill_null(False)).sum().alias("n_illegal"))  # noqa: E712
    )
    frame = (
        turns.join(keys.lazy(), on="unit_id", how="left", maintain_order="left")
        .join(games.select("unit_id", "cell", "seed"), on="unit_id", how="left", maintain_order="left")
        .join(counts, on=["unit_id", "turn"], how="left", maintain_order="left")
        .with_columns(pl.col("call_ids").list.join(","), pl.col("n_illegal").fill_null(0).cast(pl.Int64))
    )
    return _ordered(frame, TURNS_ORDER, roles)


def per_game_table(analysis: Analysis, keys: pl.DataFrame) -> pl.LazyFrame:
    frame = in_design_order(analysis.scan_per_game).join(keys.lazy(), on="unit_id", how="left", maintain_order="left")
    return _ordered(frame, KEY_ORDER, [])


def _declared_metrics(analysis: Analysis) -> pl.DataFrame:
    """(game, metric, order) for games whose family declares its cell metrics (``CELL_METRICS``)."""
    pairs = analysis.scan_per_game.select("game", "family").unique().collect()
    rows = [{"game": g, "metric": m, "order": i} for g, f in pairs.iter_rows()
            for i, m in enumerate(cell_metrics(f))]
    return pl.DataFrame(rows, schema={"game": pl.String, "metric": pl.String, "order": pl.Int64})


def _role_of(metric: pl.Expr, roles: list[str]) -> pl.Expr:
    """The role a metric is about (``seller_disclosure`` -> seller), null for whole-game metrics."""
    out = pl.lit(None, pl.String)
    for r in reversed(roles):
        out = pl.when(metric.str.starts_with(f"{r}_")).then(pl.lit(r)).otherwise(out)
    return out


def by_cell_table(analysis: Analysis, roles: list[str]) -> pl.DataFrame:
    """``metrics_by_cell`` with its ``cell`` name and the ``role`` of per-role metrics. A family that declares
    its cell metrics gets exactly those, one row each per cell (seed 002: 20 per cell; an empty denominator is
    a row with no estimate), other families every per-game metric."""
    by = analysis.by
    cells = analysis.scan_per_game.select(*by, "cell").unique().collect() if "cell" not in by else None
    if cells is not None and cells.height and cells.group_by(by).len()["len"].gt(1).any():
        cells = cells.select(*by).unique().with_columns(pl.lit(None, pl.String).alias("cell"))  # grouped coarser
    out = analysis.by_cell
    declared = _declared_metrics(analysis)
    if "game" in by and declared.height:
        grid = (cells.drop("cell") if cells is not None else out.select(by)).unique().join(declared, on="game")
        listed = grid.join(out, on=[*by, "metric"], how="left", nulls_equal=True) \
            .with_columns(pl.col("n_games", "n_seeds").fill_null(0))
        rest = out.join(declared.select("game").unique(), on="game", how="anti")
        sort = [c for c in (*by, "order") if c in listed.columns]
        out = pl.concat([listed.sort(sort, nulls_last=True).drop("order"), rest], how="diagonal_relaxed")
    if cells is not None:
        out = out.join(cells, on=by, how="left", nulls_equal=True, maintain_order="left")
    out = out.with_columns(_role_of(pl.col("metric"), roles).alias("role"))
    first = ["cell", "metric", "role"]
    return out.select(*first, *(c for c in out.columns if c not in first and c not in ("cell",)))


def paired_table(analysis: Analysis, roles: list[str]) -> pl.DataFrame:
    """Paired differences, restricted like ``metrics_by_cell`` to a family's declared cell metrics."""
    out = analysis.paired
    declared = _declared_metrics(analysis)
    if "game" in analysis.by and declared.height:
        keep = out.join(declared.select("game", "metric"), on=["game", "metric"], how="semi")
        out = pl.concat([keep, out.join(declared.select("game").unique(), on="game", how="anti")])
    return out.with_columns(_role_of(pl.col("metric"), roles).alias("role"))


def tables(analysis: Analysis, keys: pl.DataFrame) -> dict[str, pl.LazyFrame | pl.DataFrame]:
    """config name -> frame, in card order (the seed's five, then ours)."""
    roles = analysis.sweep.roles()
    out: dict[str, pl.LazyFrame | pl.DataFrame] = {
        "games": games_table(analysis, keys, roles),
        "turns": turns_table(analysis, keys, roles),
        "metrics_per_game": per_game_table(analysis, keys),
        "metrics_by_cell": by_cell_table(analysis, roles),
        "operational": analysis.operational,
        "calls": analysis.sweep.scan("calls"),
        "paired_differences": paired_table(analysis, roles),
        "head_to_head": analysis.head_to_head,
    }
    per_turn = analysis.scan_per_turn
    if per_turn.collect_schema().names() and per_turn.select(pl.len()).collect().item():
        out["metrics_per_turn"] = per_turn
    return out


def raw_lines(record: GameRecord, file: str, rep: int, config: dict[str, Any] | None, prompts: str | None,  # free-form: the game config JSON of the manifest
              commit: str | None, briefs: dict[str, tuple[str, bool]]) -> list[dict[str, Any]]:  # free-form: JSON as written, seed 002's records with per-family keys
    """One game as seed 002's JSONL records: a header (seed, true valuations, models, provenance), one
    ``turn`` record per turn (its calls inside, invalid attempts included), the ``result`` with tokens per side.
    The lines are JSON payloads of seed 002's shape, built from the typed record."""
    unit, out = record.unit, record.outcome
    flat = out.model_dump(mode="json")  # the outcome's wire form: named fields and the family's figures in one object
    models = unit.models_by_role
    truth = ground_truth(unit.family)
    header = {
        "record": "header", "log_version": LOG_VERSION, "file": file,
        "experiment": unit.experiment, "cell": unit.cell, "seed": unit.seed, "rep": rep,
        **unit.model_dump(include={"unit_id", "game", "family", "condition", "pairing", "assignment", "first_speaker"}),
        **{f"{role}_model": name for role, name in models.items()},
        **{k: flat[k] for k in truth if k in flat},
        "prompt_variant": flat.get("prompt_variant", unit.condition), "prompt_hash": prompts,
        "git_commit": commit, "game_config": config, "unit": unit.model_dump(mode="json"),
        "private_briefs": {role: {"text": text, "sent": sent} for role, (text, sent) in briefs.items()},
    }
    lines = [header]
    for shown in shown_turns(record):
        t = shown.turn
        lines.append({"record": "turn", **t.model_dump(mode="json"), "model": models.get(t.role),
                      **({"unfinished": True} if shown.unfinished else {}),
                      "calls": [c.model_dump(mode="json") for c in shown.calls]})
    tokens = side_tokens(record)
    lines.append({"record": "result", "unit_id": unit.unit_id, "outcome": OUTCOMES.get(out.status),
                  **{k: v for k, v in flat.items() if k != "outcome"}, **tokens, "total_retries": out.repairs_used})
    return lines


def write_raw(analysis: Analysis, folder: Path, keys: pl.DataFrame, only: set[str] | None = None) -> int:
    """One JSONL file per game (of those in ``only``), streamed from the journal one record at a time;
    returns the count."""
    s = analysis.sweep
    where = {u: (f, r) for u, f, r in keys.iter_rows()}
    hashes = {(g, c): h for g, c, h in prompt_hashes(analysis).iter_rows()}
    commit = sweep_commit(analysis)
    n = 0
    for rec in s.records(only):
        unit = rec.unit
        file, rep = where[unit.unit_id]
        lines = raw_lines(rec, file, rep, s.game_config(unit), hashes.get((unit.game, unit.condition)), commit,
                          s.briefs(rec))
        with (folder / file).open("w") as f:
            f.writelines(json.dumps(line, default=str, ensure_ascii=False) + "\n" for line in lines)
        n += 1
    return n


def as_csv(frame: pl.LazyFrame) -> pl.LazyFrame:
    """A table as its CSV holds it: every list column as JSON (``["a", "b"]``), the rest as they are."""
    lists = [c for c, t in frame.collect_schema().items() if isinstance(t, pl.List)]
    return frame.with_columns(
        pl.struct(pl.col(c).alias("v")).struct.json_encode().str.strip_prefix('{"v":').str.strip_suffix("}").alias(c)
        for c in lists)


def _write(frame: pl.LazyFrame | pl.DataFrame, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".csv":
        as_csv(frame.lazy()).sink_csv(path, engine="streaming")
    else:
        frame.lazy().sink_parquet(path, engine="streaming")


def export(analysis: Analysis, out: Path) -> Path:
    """Write the dataset folder (replacing an earlier export) and return it."""
    s = analysis.sweep
    if out.exists():
        shutil.rmtree(out)
    (out / "raw").mkdir(parents=True)
    scope = raw_scope(analysis)
    keys = file_keys(analysis)
    write_raw(analysis, out, keys, scope)
    written: dict[str, Written] = {}
    frames = tables(analysis, keys)
    metrics = frames["metrics_by_cell"].lazy().collect()["metric"].unique(maintain_order=True).to_list()
    for name, frame in frames.items():
        stem = CARD_TABLES.get(name) or EXTRA_TABLES[name]
        if name == "metrics_per_turn":  # the one table sorted here (in parts); the others are in order as scanned
            (out / stem).parent.mkdir(parents=True, exist_ok=True)
            sink_turns_in_design_order(frame.lazy(), s.scan("games"), out / f"{stem}.parquet")
        else:
            _write(frame, out / f"{stem}.parquet")
        _write(pl.scan_parquet(out / f"{stem}.parquet"), out / f"{stem}.csv")
        scan = as_csv(pl.scan_parquet(out / f"{stem}.parquet"))  # the CSV's columns, typed as the parquet has them
        written[name] = Written(data_files=f"{stem}.csv", rows=scan.select(pl.len()).collect().item(),
                                schema_=scan.collect_schema(), digest=file_digest(out / f"{stem}.csv"))
    (out / "spec").mkdir()
    shutil.copyfile(s.path / MANIFEST, out / "spec" / MANIFEST)
    (out / "README.md").write_text(card(analysis, written, metrics, raw_complete=scope is None))
    return out
