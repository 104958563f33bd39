"""Results by model and by role: what each model gains in each role against each opponent.

The design's first question (C3: what Opus gains against Haiku, and the reverse) is a mean of
``gain_<role>`` over the games where ``model_<role>`` is one model and the other role's model is
another, with the seed-clustered bootstrap interval of ``analysis.bootstrap``. A row with role
``any`` pools both roles (our choice: a model's gain whichever side it took), still clustered by seed.
"""

from __future__ import annotations

import polars as pl

from bargain_ray.analysis.bootstrap import Bootstrap, by_cell

ANY = "any"
KEY = ["game", "role", "model", "opponent"]


def roles_of(schema: pl.Schema) -> list[str]:
    """The roles a sweep's games name both a model and a gain for."""
    return [c.removeprefix("gain_") for c in schema.names()
            if c.startswith("gain_") and f"model_{c.removeprefix('gain_')}" in schema.names()]


def gains_by_model(known: pl.LazyFrame, boot: Bootstrap) -> pl.DataFrame:
    """One row per (game, role, model, opponent model): games, seeds, mean gain and its CI.

    Two-role games only (an opponent is the other role's model); empty when the games have no gains."""
    roles = roles_of(known.collect_schema())
    if len(roles) != 2:
        return pl.DataFrame(schema={c: pl.String for c in KEY})
    sides = [
        known.select("game", "seed", pl.lit(role).alias("role"), pl.col(f"model_{role}").alias("model"),
                     pl.col(f"model_{other}").alias("opponent"), pl.col(f"gain_{role}").cast(pl.Float64).alias("gain"))
        for role, other in (roles, roles[::-1])
    ]
    stacked = pl.concat(sides)
    per_role = by_cell(stacked, KEY, ["gain"], boot)
    pooled = by_cell(stacked.with_columns(pl.lit(ANY).alias("role")), KEY, ["gain"], boot)
    return (pl.concat([per_role, pooled]).drop("metric")
            .sort("game", pl.col("role") == ANY, "role", "model", "opponent"))
