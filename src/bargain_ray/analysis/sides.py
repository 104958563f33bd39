"""Each party of each known game as one row: who played it, in which seat, whether it moved first, and the family's
own outcome for it; the table the head-to-head and the outcome model both read (they never re-derive a figure).

A party is a role that negotiates (``Game.parties``: an observer that only judges is not one). Its ``seat`` is the
agent letter the design put in the role (``<role>_agent``), ``first`` whether the role moved first (the family's
``Results.opener`` column), ``context`` every other party's role and model, and ``same`` whether every party of the
game played one model (a same-model pair) or not (a cross-model pair).
"""

from __future__ import annotations

import polars as pl

from bargain_ray.games.kit.results import RoleFigure

COLUMNS = {"unit_id": pl.String, "game": pl.String, "condition": pl.String, "seed": pl.Int64, "role": pl.String,
           "model": pl.String, "seat": pl.String, "first": pl.Boolean, "value": pl.Float64, "context": pl.String,
           "same": pl.Boolean}


def party_rows(games: pl.LazyFrame, parties: dict[str, tuple[str, ...]], figure: RoleFigure,
               opener: str) -> pl.DataFrame:
    """One row per (known game, party) of the games named in ``parties`` (game -> its parties), with its
    ``figure`` (``{role}`` filled in; a per-game column is every party's)."""
    names = set(games.collect_schema().names())
    frames = []
    for game, roles in parties.items():
        for role in roles:
            column = figure.column.format(role=role)
            if not {f"{role}_model", f"{role}_agent", column, opener} <= names:
                continue
            frames.append(games.filter(pl.col("game") == game).select(
                pl.col("unit_id"), pl.col("game").cast(pl.String), pl.col("condition").cast(pl.String),
                pl.col("seed").cast(pl.Int64), pl.lit(role).alias("role"),
                pl.col(f"{role}_model").cast(pl.String).alias("model"),
                pl.col(f"{role}_agent").cast(pl.String).alias("seat"),
                (pl.col(opener).cast(pl.String) == role).fill_null(False).alias("first"),
                pl.col(column).cast(pl.Float64).alias("value")))
    if not frames:
        return pl.DataFrame(schema=COLUMNS)
    rows = pl.concat(frames).collect()
    others = (rows.select("unit_id", pl.col("role").alias("other"), pl.col("model").alias("other_model"))
              .join(rows.select("unit_id", "role"), on="unit_id").filter(pl.col("other") != pl.col("role"))
              .sort("other")
              .group_by("unit_id", "role")
              .agg(pl.format("{}={}", "other", "other_model").str.join(", ").alias("context")))
    same = rows.group_by("unit_id").agg((pl.col("model").n_unique() == 1).alias("same"))
    return (rows.join(others, on=["unit_id", "role"], how="left").join(same, on="unit_id")
            .with_columns(pl.col("context").fill_null("")).drop_nulls("value").select(list(COLUMNS))
            .sort("unit_id", "role"))  # one order, so every sum after it is the same, bit for bit, every time
