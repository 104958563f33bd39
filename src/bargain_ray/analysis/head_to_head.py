"""The head-to-head answer: for every two models of a game, which does better on the family's own outcome, by how
much, and what else moves the outcome (``analysis.outcome_model``); the report opens with it, the dataset holds it
(``metrics/head_to_head``), and ``bargain_ray.head_to_head(path)`` returns it.

A contrast (ours) is model A - model B in matched cells: the same game, condition and seed, the same role, seat and
opener, the same model in every other party's role; only the model in the role differs. At each seed the matched
cells' differences are averaged (over every role, and per role), and the seeds' averages give the estimate and its
interval (``analysis.intervals``). A design whose pairings never hold the other parties fixed (only same-model pairs)
has no matched cell, and says so. Models are ordered as the grid's pairings first name their letters (A first).

Multiplicity: the contrasts and the outcome model's first-mover and seat effects of a sweep are one family; each row
shows its p-value, Holm's adjusted p-value over the family, and Bonferroni's simultaneous interval beside its own
(Holm gives no intervals of its own; Bonferroni's cover all rows together at the stated level).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

from bargain_ray.analysis.intervals import LEVEL, at_level, contrast, holm, simultaneous_level
from bargain_ray.analysis.outcome_model import effects
from bargain_ray.analysis.sides import party_rows
from bargain_ray.analysis.sweep import Sweep
from bargain_ray.games.kit.results import Results

ANY = "any"
SLOT = ["game", "condition", "seed", "role", "seat", "first", "context"]
"""What a matched cell holds fixed, beside the seed's draws."""
TABLE = {"game": pl.String, "outcome": pl.String, "label": pl.String, "kind": pl.String, "condition": pl.String,
         "role": pl.String, "model_a": pl.String, "model_b": pl.String, "pairs": pl.String, "term": pl.String,
         "n": pl.Int64, "n_seeds": pl.Int64, "estimate": pl.Float64, "ci_low": pl.Float64, "ci_high": pl.Float64,
         "p_value": pl.Float64, "p_holm": pl.Float64, "ci_low_adjusted": pl.Float64,
         "ci_high_adjusted": pl.Float64, "note": pl.String}
"""The table's columns: ``kind`` is ``head_to_head`` (A - B; ``n`` matched cells), ``first_mover`` or ``seat`` (an
effect of the outcome model fitted on ``pairs`` games; ``n`` parties)."""


def model_order(sweep: Sweep) -> dict[str, int]:
    """Each model's place: the order in which the grid's pairings first name its letter."""
    config = sweep.manifest.config
    letters = dict.fromkeys(ch for d in config.grid.designs for p in d.pairings for ch in p)
    names = dict.fromkeys(config.models[ch].name for ch in letters if ch in config.models)
    return {name: i for i, name in enumerate(names)}


def matched(sides: pl.DataFrame, order: dict[str, int]) -> pl.DataFrame:
    """One row per matched cell and seed: the two models' outcomes there and A - B (A the earlier model)."""
    per = sides.group_by([*SLOT, "model"]).agg(pl.col("value").mean()).with_columns(
        pl.col("model").replace_strict(order, default=len(order)).alias("rank"))
    pairs = per.join(per, on=SLOT, suffix="_b").filter(
        (pl.col("rank") < pl.col("rank_b")) | ((pl.col("rank") == pl.col("rank_b")) & (pl.col("model") < pl.col("model_b"))))
    return pairs.select(*SLOT, pl.col("model").alias("model_a"), "model_b",
                        (pl.col("value") - pl.col("value_b")).alias("diff")).sort(*SLOT, "model_a", "model_b")


def summarised(cells: pl.DataFrame, by: list[str], level: float) -> list[dict]:
    """The estimate over seeds of each group of matched cells: the cells averaged within seed, then over seeds."""
    out = []
    seeds = cells.group_by([*by, "seed"]).agg(pl.col("diff").mean())
    slots = cells.group_by(by).agg(pl.struct("role", "seat", "first", "context").n_unique().alias("n"))
    for key, frame in seeds.join(slots, on=by).sort([*by, "seed"]).group_by(by, maintain_order=True):
        diffs = frame["diff"].to_numpy()
        low, high, p = contrast(diffs, level)
        out.append(dict(zip(by, key, strict=True)) | {
            "n": int(frame["n"][0]), "n_seeds": len(diffs), "estimate": float(np.mean(diffs)), "ci_low": low,
            "ci_high": high, "p_value": p, "note": None if low is not None else f"{len(diffs)} seeds: no interval"})
    return out


def contrasts(sides: pl.DataFrame, order: dict[str, int], level: float) -> list[dict]:
    """A - B per (game, condition, model pair), over every role (``any``) and per role."""
    cells = matched(sides, order)
    if cells.height == 0:
        return []
    by = ["game", "condition", "model_a", "model_b"]
    pooled = [r | {"role": ANY} for r in summarised(cells, by, level)]
    per_role = summarised(cells, [*by, "role"], level) if cells["role"].n_unique() > 1 else []
    rows = sorted([*pooled, *per_role], key=lambda r: (r["game"], r["condition"], order.get(r["model_a"], 0),
                                                        order.get(r["model_b"], 0), r["role"] != ANY, r["role"]))
    return [r | {"kind": "head_to_head", "term": f"{r['model_a']} - {r['model_b']}"} for r in rows]


def adjusted(rows: list[dict], level: float) -> list[dict]:
    """Each row with Holm's p over the family of rows with a p-value, and Bonferroni's simultaneous interval."""
    p_holm = holm([r.get("p_value") for r in rows])
    wide = simultaneous_level(sum(p is not None for p in p_holm), level)
    out = []
    for row, p in zip(rows, p_holm, strict=True):
        extra: dict = {"p_holm": p}
        if row.get("ci_low") is not None:
            low, high = at_level(row["estimate"], row["ci_low"], row["ci_high"], row["n_seeds"], level, wide)
            extra |= {"ci_low_adjusted": low, "ci_high_adjusted": high}
        out.append(row | extra)
    return out


def table_of(sweep: Sweep, games: pl.LazyFrame, results: dict[str, Results], level: float = LEVEL) -> pl.DataFrame:
    """The sweep's head-to-head table: every family's contrasts on each of its outcomes and, on its first outcome,
    the outcome model's effects; adjusted over the whole family of rows (module docstring)."""
    order = model_order(sweep)
    rows: list[dict] = []
    for family, declared in results.items():
        names = games.filter(pl.col("family") == family).select(pl.col("game").unique()).collect()["game"].to_list()
        parties = {str(g): parties_of(sweep, str(g)) for g in names}
        for i, figure in enumerate(declared.outcomes):
            sides = party_rows(games.filter(pl.col("family") == family), parties, figure, declared.opener)
            tag = {"outcome": figure.column, "label": figure.label}
            rows += [r | tag for r in contrasts(sides, order, level)]
            if i == 0:
                rows += [r | tag for r in effects(sides, level).iter_rows(named=True)]
    return pl.DataFrame(adjusted(rows, level), schema=TABLE)


def parties_of(sweep: Sweep, game: str) -> tuple[str, ...]:
    """The parties of ``game`` (of its first condition's config: conditions change words, not seats)."""
    condition = next(c for g, c in sweep.manifest.game_conditions() if g == game)
    loaded = sweep.game_for(game, condition)
    return loaded.parties() if loaded else ()


def head_to_head(path: Path | str, level: float = LEVEL) -> pl.DataFrame:
    """The head-to-head table of the sweep folder ``path``, as the report and ``metrics/head_to_head`` hold it (the
    public API's ``bargain_ray.head_to_head``)."""
    from bargain_ray.analysis.build import analyse
    from bargain_ray.analysis.sweep import read_sweep

    return analyse(read_sweep(Path(path)), level=level).head_to_head
