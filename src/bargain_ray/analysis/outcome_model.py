"""What moves a party's outcome besides its model: who moved first and which seat it sat in, from one regression.

The model (ours): ordinary least squares of a party's outcome (the family's own, ``Results.outcomes``: a gain, a
payoff, a score) on a cell mean per model and role (model x role), plus whether the party moved first, its seat (the
agent letter the design put it in) and the condition, over every party of every known game of one game config;
standard errors clustered by seed (statsmodels' CR1, the games of one seed share their draws), intervals and p-values
from ``analysis.intervals`` (t with G - 1 degrees of freedom, G seeds). It is fitted three times: on every game, on
same-model pairs only (every party one model: the first-mover and seat effects without a model difference mixed in),
and on cross-model pairs only.

Why not a rating model such as Bradley-Terry: it reduces each game to who won, which loses "by how much" in the
outcome's own units and has no term for a role's or a seat's advantage without extending it; the regression keeps
the units and adds the terms. A term the design cannot tell apart from the others (the seller always opens
bargaining; one seat always holds one role) is reported as not estimable, never as zero.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import polars as pl
from statsmodels.regression.linear_model import OLS

from bargain_ray.analysis.intervals import LEVEL, coefficient

PAIRS = {"all": None, "same-model": True, "cross-model": False}
"""Which games each fit reads: all of them, those whose parties all played one model, or the others."""
FIRST = "first mover - not"
EFFECT = {"game": pl.String, "pairs": pl.String, "term": pl.String, "kind": pl.String, "n": pl.Int64,
          "n_seeds": pl.Int64, "estimate": pl.Float64, "ci_low": pl.Float64,
          "ci_high": pl.Float64, "p_value": pl.Float64, "note": pl.String}


def dummies(values: list[str], drop_first: bool) -> tuple[list[str], np.ndarray]:
    """The levels of ``values`` (sorted) and their indicator columns, the first level left out when asked."""
    levels = sorted(set(values))
    kept = levels[1:] if drop_first else levels
    array = np.asarray(values)
    return kept, np.column_stack([array == level for level in kept]).astype(float) if kept else np.empty((len(values), 0))


def independent(base: np.ndarray, extra: np.ndarray) -> list[int]:
    """The columns of ``extra`` that each add to the rank of ``base`` and the columns kept before them."""
    kept, matrix = [], base
    rank = np.linalg.matrix_rank(matrix)
    for j in range(extra.shape[1]):
        trial = np.column_stack([matrix, extra[:, j]])
        if (r := np.linalg.matrix_rank(trial)) > rank:
            kept.append(j)
            matrix, rank = trial, r
    return kept


def fit(rows: pl.DataFrame, game: str, pairs: str, level: float = LEVEL) -> list[dict]:
    """The first-mover and seat effects of one fit (a row each, estimable or not)."""
    n, seeds = rows.height, rows["seed"].n_unique()
    if n == 0:
        return []
    cells = [f"{m}\0{r}" for m, r in zip(rows["model"], rows["role"], strict=True)]
    base = np.column_stack([dummies(cells, drop_first=False)[1],
                            dummies(rows["condition"].to_list(), drop_first=True)[1]])
    seats, seat = dummies(rows["seat"].to_list(), drop_first=True)
    reference = min(rows["seat"].to_list())
    terms = [(FIRST, "first_mover", rows["first"].cast(pl.Float64).to_numpy())]
    terms += [(f"seat {s} - seat {reference}", "seat", seat[:, j]) for j, s in enumerate(seats)]
    kept = independent(base, np.column_stack([t[2] for t in terms]))
    fitted = {}
    if kept and seeds >= 2:
        x = np.column_stack([base, *(terms[j][2] for j in kept)])
        with warnings.catch_warnings():  # a clustered variance of (numerically) zero: its standard error is NaN
            warnings.simplefilter("ignore", RuntimeWarning)
            result = OLS(rows["value"].to_numpy(), x).fit(
                cov_type="cluster", cov_kwds={"groups": rows["seed"].rank("dense").to_numpy()})
            fitted = {j: (float(result.params[base.shape[1] + i]), float(result.bse[base.shape[1] + i]))
                      for i, j in enumerate(kept)}
    out = []
    for j, (term, kind, _) in enumerate(terms):
        row = {"game": game, "pairs": pairs, "term": term, "kind": kind, "n": n, "n_seeds": seeds}
        if j not in kept:
            why = ("who moves first is fixed by the role or the cell in these games" if kind == "first_mover"
                   else "each seat holds one role (or one model) in these games")
            out.append(row | {"note": f"not estimable: {why}"})
        elif j not in fitted:
            out.append(row | {"note": f"{seeds} seed: nothing to fit"})
        else:
            estimate, se = fitted[j]
            low, high, p = coefficient(estimate, se, seeds, level)
            note = (None if low is not None else f"{seeds} seeds: no interval" if math.isfinite(se)
                    else "no spread to measure: the outcome does not vary with the rest held")
            out.append(row | {"estimate": estimate, "ci_low": low, "ci_high": high, "p_value": p, "note": note})
    return out


def effects(sides: pl.DataFrame, level: float = LEVEL) -> pl.DataFrame:
    """The first-mover and seat effects of each game, fitted on all, same-model and cross-model pairs."""
    rows = []
    for (game,), frame in sides.sort("game").group_by("game", maintain_order=True):
        for pairs, same in PAIRS.items():
            chosen = frame if same is None else frame.filter(pl.col("same") == same)
            rows += fit(chosen, str(game), pairs, level)
    return pl.DataFrame(rows, schema=EFFECT)
