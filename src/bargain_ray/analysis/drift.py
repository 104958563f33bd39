"""What served each model of a sweep, as the report and the card show it, and whether it drifted.

Each call records what its provider reported as served (``model_version``, ``system_fingerprint``, ``served_by``)
and ``calls.parquet``'s ``drift`` says whether that differs from the sweep's reference, its first answer of the
model (``Manifest.served``). A sweep whose model drifted mixes two versions under one name: the report says so
above its figures' tables, with when the change came.
"""

from __future__ import annotations

import polars as pl

from bargain_ray.core.records import model_key

SERVED = ["provider", "model", "model_version", "system_fingerprint", "served_by"]


def served_versions(calls: pl.LazyFrame) -> pl.DataFrame:
    """One row per model and what served it: calls, the first and last answer (UTC), and whether it is a drift
    from the sweep's reference (null: nothing to compare, e.g. a strategy agent)."""
    answered = calls.filter(pl.col("status") == "ok")
    return (answered.group_by(*SERVED, "drift")
            .agg(pl.len().alias("calls"), pl.col("answered_at").min().alias("first answered"),
                 pl.col("answered_at").max().alias("last answered"))
            .sort("provider", "model", "first answered", nulls_last=True).collect())


def drift_note(served: pl.DataFrame) -> str | None:
    """The sentence a drifted sweep's report and card carry (None when no call drifted)."""
    drifted = served.filter(pl.col("drift").fill_null(False))
    if drifted.height == 0:
        return None
    parts = [f"{model_key(r['provider'], r['model'])} answered {r['calls']} calls as {r['model_version']}"
             + (f" ({r['system_fingerprint']})" if r["system_fingerprint"] else "")
             + (f" via {r['served_by']}" if r["served_by"] else "")
             + (f" from {r['first answered']:%Y-%m-%d %H:%M:%S} UTC" if r["first answered"] else "")
             for r in drifted.iter_rows(named=True)]
    return ("Model drift: the provider served another version than the sweep's first answer of the model: "
            + "; ".join(parts) + ". These calls have drift = true in calls.parquet; figures mixing them mix versions.")
