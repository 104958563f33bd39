"""The report's first section: the head-to-head answer (``analysis.head_to_head``), read in one sentence per game and
condition, as a table and a forest plot, with the outcome model's first-mover and seat effects beside it.
"""

from __future__ import annotations

import polars as pl

from bargain_ray.analysis import svg
from bargain_ray.analysis.head_to_head import ANY
from bargain_ray.analysis.intervals import MIN_SEEDS, simultaneous_level
from bargain_ray.analysis.page import escape, table

ANCHOR = "head-to-head"
TITLE = "Head-to-head: which model does better, and by how much"
METHOD = (
    "Model A − model B on each family's own outcome, in matched cells (ours): the same seed, condition, role, seat "
    "and opener, and the same models in every other role; only the model in the role differs. Each seed's matched "
    "cells are averaged (role <i>any</i>: over every role), then the seeds: mean [{level:.0%} t interval over "
    "seeds]. Multiplicity: every row of this section with a p-value is one family; <i>Holm p</i> is Holm's adjusted "
    "p-value over it, <i>simultaneous CI</i> Bonferroni's interval at level 1 − {alpha:.2g}/m (all rows covered "
    "together; Holm gives no intervals)."
)
MODEL = (
    "The outcome model (ours): least squares of a party's outcome on a mean per model and role, whether it moved "
    "first, its seat (the agent letter the design put it in, which no model reads: a control that should be zero) and "
    "the condition, standard errors clustered by seed (statsmodels, CR1), t with G − 1 degrees of freedom; fitted on "
    "all games, on same-model pairs (every party one model) and on cross-model pairs apart. A regression rather than "
    "a rating model such as Bradley–Terry: it keeps the outcome's units (by how much, not who won) and has terms for "
    "the opener's and the seat's advantage. A term the design does not vary apart from the role is not estimable."
)


def p_text(p: float | None) -> str:
    return "" if p is None else "< 0.001" if p < 0.001 else f"{p:.3f}"


def estimate_text(row: dict) -> str:
    """``estimate [low, high]``, or the estimate and why it has no interval."""
    if row["estimate"] is None:
        return ""
    if row["ci_low"] is None:
        return f"{row['estimate']:.4g} (n={row['n_seeds']} seeds, fewer than {MIN_SEEDS}: no CI)"
    return f"{row['estimate']:.4g} [{row['ci_low']:.4g}, {row['ci_high']:.4g}]"


def adjusted_text(row: dict) -> str:
    if row["ci_low_adjusted"] is None:
        return ""
    return f"[{row['ci_low_adjusted']:.4g}, {row['ci_high_adjusted']:.4g}]"


def reading(row: dict, level: float) -> str:
    """One sentence: the pooled contrast of a game and condition, and what it says."""
    a, b, n = row["model_a"], row["model_b"], row["n_seeds"]
    head = (f"{row['game']}, condition {row['condition']}: {a} − {b} in {row['label']} is {row['estimate']:+.4g} a "
            f"game in the same role, seat and opener against the same opponents, over {n} seeds")
    if row["ci_low"] is None:
        return f"{head}; {n} seeds are fewer than the {MIN_SEEDS} an interval needs, so this is no finding yet."
    span = f"({level:.0%} CI [{row['ci_low']:.4g}, {row['ci_high']:.4g}], Holm-adjusted p {p_text(row['p_holm'])})"
    if row["ci_low"] <= 0 <= row["ci_high"]:
        return f"{head} {span}: the interval includes zero, no difference is shown at this size."
    higher = a if row["estimate"] > 0 else b
    return f"{head} {span}: higher for {higher}."


def contrasts_table(rows: pl.DataFrame, level: float) -> pl.DataFrame:
    named = rows.iter_rows(named=True)
    return pl.DataFrame([{
        "game": r["game"], "condition": r["condition"], "outcome": r["label"], "role": r["role"],
        "A − B": f"{r['model_a']} − {r['model_b']}", "seeds": r["n_seeds"], "matched cells": r["n"],
        f"estimate [{level:.0%} CI]": estimate_text(r), "p": p_text(r["p_value"]), "Holm p": p_text(r["p_holm"]),
        "simultaneous CI": adjusted_text(r)} for r in named])


def effects_table(rows: pl.DataFrame, level: float) -> pl.DataFrame:
    return pl.DataFrame([{
        "game": r["game"], "outcome": r["label"], "games": r["pairs"], "effect": r["term"], "parties": r["n"],
        "seeds": r["n_seeds"], f"estimate [{level:.0%} CI]": estimate_text(r), "p": p_text(r["p_value"]),
        "Holm p": p_text(r["p_holm"]), "simultaneous CI": adjusted_text(r), "note": r["note"] or ""}
        for r in rows.iter_rows(named=True)])


def forest_plots(rows: pl.DataFrame, level: float) -> list[str]:
    """One forest plot per game, outcome and pair of models: each condition's pooled and per-role contrasts."""
    plots = []
    for (game, label, a, b), part in rows.group_by("game", "label", "model_a", "model_b", maintain_order=True):
        points = [(f"{r['condition']} · role {r['role']}", r["estimate"], r["ci_low"], r["ci_high"],
                   r["ci_low_adjusted"], r["ci_high_adjusted"]) for r in part.iter_rows(named=True)]
        plots.append(svg.forest(points, f"{game}: {a} − {b} in {label}",
                                note=f"{level:.0%} CI (thick) and simultaneous CI (thin); dashed: no difference"))
    return plots


def section(h2h: pl.DataFrame, level: float) -> str:
    """The section's HTML: readings, the contrasts' table and forest plots, the effects' table."""
    contrasts = h2h.filter(pl.col("kind") == "head_to_head")
    effects = h2h.filter(pl.col("kind") != "head_to_head")
    family = int(h2h["p_value"].is_not_null().sum())
    first = contrasts.filter(pl.col("role") == ANY).unique(["game", "condition"], keep="first", maintain_order=True)
    readings = "".join(f"<li>{escape(reading(r, level))}</li>" for r in first.iter_rows(named=True))
    plots = "".join(f"<figure>{p}</figure>" for p in forest_plots(contrasts, level))
    none = ("no matched cells: no two models played one role against the same opponents with the same seat and "
            "opener (a design of same-model pairs only compares nothing head to head)")
    return "".join([
        f'<h2 id="{ANCHOR}">{escape(TITLE)}</h2>',
        f'<ul class="reading" id="{ANCHOR}-reading">{readings}</ul>' if readings else "",
        f'<p class="meta">{METHOD.format(level=level, alpha=1 - level)} Here m = {family}, each simultaneous '
        f"interval at level {simultaneous_level(family, level):.4f}.</p>",
        f'<div id="{ANCHOR}-table">' + table(contrasts_table(contrasts, level), left=5, empty=none) + "</div>",
        f'<div class="plots" id="{ANCHOR}-plot">{plots}</div>' if plots else "",
        f'<h3 id="{ANCHOR}-effects">What else moves the outcome: the first mover and the seat</h3>',
        f'<p class="meta">{escape(MODEL)}</p>',
        f'<div id="{ANCHOR}-effects-table">' + table(effects_table(effects, level), left=4,
                                                     empty="no family declares an outcome") + "</div>",
    ])
