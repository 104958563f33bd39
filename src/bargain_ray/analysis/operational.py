"""Operational figures per model: how each model followed the protocol and what it cost.

As seed 002's ``operational`` table: calls, repairs, invalid attempts by
rule, format failures, technical failures, latency percentiles, tokens, cost.
A format failure counts against the model whose repairs ran out; a game that
ended in a technical failure counts against every model that played in it.
All of it is lazy polars over the tables.
"""

from __future__ import annotations

import polars as pl

from bargain_ray.analysis.sweep import Sweep

KEY = ["provider", "model"]


def operational(sweep: Sweep) -> pl.DataFrame:
    """One row per (provider, model) as configured; ``reported_models`` lists what the provider said."""
    calls = sweep.scan("calls")
    main = calls.group_by(KEY).agg(
        pl.col("unit_id").n_unique().alias("games"),
        pl.len().alias("calls"),
        (pl.col("repair") > 0).sum().alias("repairs"),
        (pl.col("valid") == False).sum().alias("invalid_attempts"),  # noqa: E712 (null stays out)
        (pl.col("status") != "ok").sum().alias("technical_failures"),
        (pl.col("attempts") - 1).clip(lower_bound=0).sum().alias("retries"),
        pl.col("latency_s").mean().alias("latency_mean_s"),
        *(pl.col("latency_s").quantile(q, interpolation="linear").alias(f"latency_p{int(q * 100)}_s")
          for q in (0.5, 0.9, 0.99)),
        *(pl.col(c).sum() for c in ("input_tokens", "output_tokens", "cache_read_tokens",
                                     "cache_write_tokens", "reasoning_tokens", "cost_usd")),
        pl.col("model_version").drop_nulls().unique().sort().str.join(", ").alias("reported_models"),
    ).collect(engine="streaming")
    if main.height == 0:
        return pl.DataFrame(schema={"provider": pl.String, "model": pl.String, "calls": pl.Int64})
    main = main.with_columns((pl.col("invalid_attempts") / pl.col("calls")).alias("invalid_rate"))
    out = main
    for f in (_by_rule(calls), _format_failures(sweep), _technical_games(sweep), _observer_reasks(sweep)):
        if f.height:
            out = out.join(f, on=KEY, how="left")
    for name in ("format_failures", "games_technical_error"):
        if name not in out.columns:
            out = out.with_columns(pl.lit(0).alias(name))
    counts = [c for c, t in out.schema.items() if t.is_integer()]
    return out.with_columns(pl.col(counts).fill_null(0).cast(pl.Int64)).sort(KEY)


def _by_rule(calls: pl.LazyFrame) -> pl.DataFrame:
    """Invalid attempts counted by the rule they broke, one column per rule."""
    bad = calls.filter(pl.col("valid") == False).group_by([*KEY, "rule"]).len().collect(engine="streaming")  # noqa: E712
    if bad.height == 0:
        return pl.DataFrame()
    return bad.with_columns(("invalid_rule_" + pl.col("rule").fill_null("unknown")).alias("rule")).pivot(
        on="rule", index=KEY, values="len"
    )


def _format_failures(sweep: Sweep) -> pl.DataFrame:
    """Games ended by exhausted repairs, by the model whose last reply was invalid."""
    failed = sweep.scan("games").filter(pl.col("status") == "FORMAT_FAILURE").select("unit_id")
    last = (
        sweep.scan("turns").join(failed, on="unit_id").filter(~pl.col("valid"))
        .select(pl.col("call_ids").list.last().alias("call_id"))
    )
    return (last.join(sweep.scan("calls"), on="call_id").group_by(KEY).len()
            .rename({"len": "format_failures"}).collect(engine="streaming"))


def _technical_games(sweep: Sweep) -> pl.DataFrame:
    """Games that ended unknown, counted for each model that played in them."""
    games = sweep.scan("games")
    names = games.collect_schema().names()
    models = [f"{r}_model" for r in sweep.roles() if f"{r}_model" in names]
    if not models:
        return pl.DataFrame()
    played = (
        games.filter(~pl.col("known")).select("unit_id", *models)
        .unpivot(index="unit_id", on=models, value_name="model").drop_nulls("model")
        .select("unit_id", "model").unique()
    )
    providers = sweep.scan("calls").select(KEY).unique()
    return (played.join(providers, on="model").group_by(KEY).len()
            .rename({"len": "games_technical_error"}).collect(engine="streaming"))


def _observer_reasks(sweep: Sweep) -> pl.DataFrame:
    """How often each model, as a game's observer, was asked again because its verdict could not be read
    (``observer_reasks``), out of its ``observer_calls``: the instrument's own reliability, apart from the
    model's calls as a party. Only families whose games name an ``observer_role`` have these columns."""
    games = sweep.scan("games")
    if "observer_role" not in games.collect_schema().names():
        return pl.DataFrame()
    observed = games.select("unit_id", pl.col("observer_role").alias("role")).drop_nulls("role")
    return (
        sweep.scan("calls").join(observed, on=["unit_id", "role"]).group_by(KEY)
        .agg(pl.len().alias("observer_calls"), (pl.col("repair") > 0).sum().alias("observer_reasks"))
        .collect(engine="streaming")
    )
