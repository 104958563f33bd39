"""Results by model and role: what each model scores in each role against the other roles' models.

The design's first question (C3: what Opus gains against Haiku, and the reverse) is a mean of a role's figure
(``gain_<role>``, ``<role>_payoff``, a seat's ``score_<role>``, a party's words per message) over the games where
``<role>_model`` is one model, by the models of the other roles that have the figure (the opponent; several
joined by " + "), with the seed-clustered interval of ``analysis.intervals``. A row with role ``any``
pools the roles (our choice: a model's figure whichever side it took), still clustered by seed. A per-turn
figure is averaged over a role's turns of a game first.
"""

from __future__ import annotations

import polars as pl

from bargain_ray.analysis.seeds import by_cell
from bargain_ray.games.kit.results import RoleFigure

ANY = "any"
KEY = ["game", "role", "model", "opponent"]
EMPTY = {**{c: pl.String for c in KEY}, "n_games": pl.Int64, "n_seeds": pl.Int64, "mean": pl.Float64,
         "ci_low": pl.Float64, "ci_high": pl.Float64}
SIDES = {"unit_id": pl.String, "game": pl.String, "seed": pl.Int64, "role": pl.String, "model": pl.String,
         "value": pl.Float64}


def per_game_role(games: pl.LazyFrame, turns: pl.LazyFrame, figure: RoleFigure, roles: list[str]) -> pl.LazyFrame:
    """(unit_id, game, seed, role, model, value): one row per game and role that has the figure."""
    if figure.per == "turn":
        if figure.column not in turns.collect_schema().names():
            return pl.LazyFrame(schema=SIDES)
        return (turns.filter(pl.col("role").is_in(roles)).drop_nulls(figure.column)
                .group_by("unit_id", "game", "seed", "role", "model", maintain_order=True)
                .agg(pl.col(figure.column).cast(pl.Float64).mean().alias("value")))
    names = games.collect_schema().names()
    sides = [
        games.select("unit_id", "game", "seed", pl.lit(role).alias("role"), pl.col(f"{role}_model").alias("model"),
                     pl.col(figure.column.format(role=role)).cast(pl.Float64).alias("value"))
        for role in roles if {f"{role}_model", figure.column.format(role=role)} <= set(names)
    ]
    return pl.concat(sides).drop_nulls("value") if sides else pl.LazyFrame(schema=SIDES)


def with_opponents(sides: pl.LazyFrame) -> pl.LazyFrame:
    """Each side with ``opponent``: the models of the game's other sides (that have the figure), sorted, joined."""
    others = (sides.select("unit_id", pl.col("role").alias("other"), pl.col("model").alias("other_model"))
              .join(sides.select("unit_id", "role"), on="unit_id")
              .filter(pl.col("other") != pl.col("role"))
              .group_by("unit_id", "role")
              .agg(pl.col("other_model").drop_nulls().unique().sort().str.join(" + ").alias("opponent")))
    return sides.join(others, on=["unit_id", "role"], how="left").with_columns(pl.col("opponent").fill_null("(none)"))


def figure_by_model(games: pl.LazyFrame, turns: pl.LazyFrame, figure: RoleFigure, roles: list[str],
                    level: float) -> pl.DataFrame:
    """One row per (game, role, model, opponent): games, seeds, mean of the figure and its CI; role ``any``
    pools the roles when more than one has the figure."""
    sides = with_opponents(per_game_role(games, turns, figure, roles)).select("game", "seed", *KEY[1:], "value")
    if sides.select(pl.len()).collect().item() == 0:
        return pl.DataFrame(schema=EMPTY)
    per_role = by_cell(sides, KEY, ["value"], level)
    out = [per_role]
    if sides.select(pl.col("role").n_unique()).collect().item() > 1:
        out.append(by_cell(sides.with_columns(pl.lit(ANY).alias("role")), KEY, ["value"], level))
    order = {r: i for i, r in enumerate([*roles, ANY])}
    return (pl.concat(out).drop("metric")
            .sort("game", pl.col("role").replace_strict(order, default=len(order)), "model", "opponent"))
