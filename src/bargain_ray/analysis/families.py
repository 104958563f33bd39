"""The families a sweep played, each with the results it declares (``games.kit.results.Results``).

Analysis reads what a family says it measures and names no family itself: a family this install does not
know, or one that declares nothing, gets the shared figures every game has.
"""

from __future__ import annotations

import polars as pl

from bargain_ray.analysis.per_game import game_class
from bargain_ray.games.kit.results import Length, Results

SHARED = Results(
    title="",
    headline=("agreement", "rounds_to_agreement"),
    by_cell=("agreement", "rounds_to_agreement", "format_failure"),
    length=Length(column="rounds_to_agreement", label="turns to agreement"),
)
"""What every game has, for a family that declares no results of its own."""


def results_of(family: str | None) -> Results:
    """The results ``family`` declares (``Game.results``), else the shared ones titled by its name."""
    cls = game_class(family)
    declared = cls.results if cls else None
    return declared or SHARED.model_copy(update={"title": str(family)})


def families(games: pl.LazyFrame) -> list[str]:
    """The families of a sweep's games, in the order the games first name them."""
    names = games.select(pl.col("family").unique(maintain_order=True).drop_nulls()).collect()["family"]
    return [str(f) for f in names]


def with_derived(games: pl.LazyFrame) -> pl.LazyFrame:
    """The per-game frame with every figure the sweep's families derive (``Results.derived``), each computed on
    its family's games only (null on the others)."""
    exprs: dict[str, pl.Expr] = {}
    for family in families(games):
        for d in results_of(family).derived:
            value = pl.when(pl.col("family") == family).then(pl.sql_expr(d.sql).cast(pl.Float64))
            exprs[d.name] = pl.coalesce(exprs[d.name], value) if d.name in exprs else value
    return games.with_columns(e.alias(name) for name, e in exprs.items()) if exprs else games


def derived_fields(names: list[str]) -> dict[str, str]:
    """The card's meaning of each derived figure of these families."""
    return {d.name: d.meaning for f in names for d in results_of(f).derived}


def _matches(pattern: str, column: str) -> bool:
    head, star, tail = pattern.partition("*")
    return column == pattern if not star else column.startswith(head) and column.endswith(tail)


def deal_line(row: dict[str, object], family: str | None, roles: list[str]) -> str:
    """What a game agreed and each role's figure, as its family declares them (``Results.deal`` and the per-game
    ``by_role`` figures), from the game's typed columns: ``deal: price 55, round 3 · seller_payoff 20.5, ...``."""
    results = results_of(family)
    terms = [f"{k.removeprefix(p.partition('*')[0]) if '*' in p else k} {_text(v)}"
             for p in results.deal for k, v in row.items() if _matches(p, k) and v is not None]
    figures = [f"{column} {_text(v)}" for f in results.by_role if f.per == "game" for r in roles
               if (v := row.get(column := f.column.format(role=r))) is not None]
    parts = ([f"deal: {', '.join(terms)}"] if terms else ["no deal"] if not row.get("agreement") else ["deal"])
    return " · ".join(parts + ([", ".join(figures)] if figures else []))


def _text(v: object) -> str:
    return f"{v:.4g}" if isinstance(v, float) else str(v)
