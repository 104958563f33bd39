"""People in human seats, reported apart from the models.

A role's figure (``RoleFigure``) where a person played the role (``<role>_human`` in the games table: the role's
replies were a person's, provider ``human``) is the person arm; the same role played by a model against the same
opponents is a model arm. Each arm's mean carries the report's t interval over seeds
(``analysis.intervals``), and each person - model contrast is taken on the seeds both arms played (every cell of a
block plays its seed), as the report's paired differences are.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from bargain_ray.analysis.intervals import LEVEL, interval
from bargain_ray.analysis.roles import per_game_role, with_opponents
from bargain_ray.analysis.seeds import by_cell
from bargain_ray.games.kit.results import RoleFigure

PERSON = "person"
"""The arm of the sides a person played."""
KEY = ["game", "role", "opponent"]
CONTRAST = {**{c: pl.String for c in KEY}, "arms": pl.String, "n_seeds": pl.Int64, "mean_diff": pl.Float64,
            "ci_low": pl.Float64, "ci_high": pl.Float64}


def human_column(role: str) -> str:
    return f"{role}_human"


def has_people(games: pl.LazyFrame, roles: list[str]) -> bool:
    """Whether any game of ``games`` had a role played by a person."""
    marks = [human_column(r) for r in roles if human_column(r) in games.collect_schema().names()]
    return bool(marks) and bool(games.select(pl.any_horizontal(*marks).any()).collect().item())


def sides(games: pl.LazyFrame, turns: pl.LazyFrame, figure: RoleFigure, roles: list[str]) -> pl.DataFrame:
    """Each game's side with the figure, its opponents, and its ``arm``: ``person`` or the model that played it."""
    names = games.collect_schema().names()
    marks = [games.select("unit_id", pl.lit(r).alias("role"), pl.col(human_column(r)).alias("person"))
             for r in roles if human_column(r) in names]
    if not marks:
        return pl.DataFrame()
    played = with_opponents(per_game_role(games, turns, figure, roles)).join(
        pl.concat(marks), on=["unit_id", "role"], how="left")
    return played.with_columns(
        pl.when(pl.col("person").fill_null(False)).then(pl.lit(PERSON)).otherwise(pl.col("model")).alias("arm"),
    ).collect()


def arms(frame: pl.DataFrame, level: float = LEVEL) -> pl.DataFrame:
    """Per (game, role, opponent) a person played: each arm's games, seeds, mean and interval."""
    if frame.is_empty():
        return frame
    wanted = frame.filter(pl.col("arm") == PERSON).select(KEY).unique()
    return (by_cell(frame.join(wanted, on=KEY), [*KEY, "arm"], ["value"], level).drop("metric")
            .sort(*KEY, pl.col("arm") != PERSON, "arm"))


def contrasts(frame: pl.DataFrame, level: float = LEVEL) -> pl.DataFrame:
    """Person - model of each model arm beside a person arm, on the seeds both played."""
    if frame.is_empty():
        return pl.DataFrame(schema=CONTRAST)
    means = frame.group_by(*KEY, "arm", "seed").agg(pl.col("value").mean()).sort("seed")
    rows = []
    for (game, role, opponent), group in means.group_by(KEY, maintain_order=True):
        person = group.filter(pl.col("arm") == PERSON)
        for model in sorted(set(group["arm"]) - {PERSON}):
            other = group.filter(pl.col("arm") == model)
            common, at_p, at_m = np.intersect1d(person["seed"].to_numpy(), other["seed"].to_numpy(),
                                                return_indices=True)
            if person.is_empty() or not len(common):
                continue
            diff = person["value"].to_numpy()[at_p] - other["value"].to_numpy()[at_m]
            low, high = interval(diff, level)
            rows.append({"game": game, "role": role, "opponent": opponent, "arms": f"{PERSON} − {model}",
                         "n_seeds": len(diff), "mean_diff": float(diff.mean()), "ci_low": low, "ci_high": high})
    return pl.DataFrame(rows, schema=CONTRAST).sort(KEY)
