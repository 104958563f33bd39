"""Exact scoring of a multi-issue game: the outcome record of seed 001."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from typing import Any

from bargain_ray.core.figures import Figure, figure, value_of
from bargain_ray.core.status import Status
from bargain_ray.games.kit.results import Length, Results, RoleFigure
from bargain_ray.games.multi_issue.config import MultiIssueConfig, exact
from bargain_ray.games.multi_issue.engine import State


def utility(config: MultiIssueConfig, role: str, terms: dict[str, Decimal | float]) -> Fraction:
    """Points of ``role`` for a deal, exactly as its brief states them."""
    total = Fraction(0)
    for t in config.terms:
        stake = config.roles[role].stakes[t.name]
        share = (exact(str(terms[t.name])) - exact(t.offset)) / exact(t.scale) / exact(t.levels)
        total += exact(stake.weight) * (1 - share if stake.prefers == "low" else share)
    return total


def fallback(config: MultiIssueConfig, role: str) -> Fraction:
    return exact(config.roles[role].no_agreement)


def _extremes(config: MultiIssueConfig) -> list[dict[str, Fraction]]:
    """Each term at either end; linear scores peak at these corners."""
    corners: list[dict[str, Fraction]] = [{}]
    for t in config.terms:
        corners = [c | {t.name: exact(v)} for c in corners for v in (t.min, t.max)]
    return corners


def bounds(config: MultiIssueConfig) -> dict[str, tuple[Fraction, Fraction]]:
    """Each role's gain range and the joint gain from no deal (0) to the best deal."""
    corners = _extremes(config)
    out = {}
    for role in config.roles:
        values = [utility(config, role, c) - fallback(config, role) for c in corners]
        out[f"{role}_gain"] = (min(values), max(values))
    best = max(sum(utility(config, r, c) - fallback(config, r) for r in config.roles) for c in corners)
    out["joint_gain"] = (Fraction(0), best)
    return out


def outcome(config: MultiIssueConfig, state: State, b: dict[str, tuple[Fraction, Fraction]]) -> dict[str, Any]:
    """The scored part of the outcome record (``Outcome.scored``; ``bounds`` goes to ``Outcome.bounds``); ``b`` is ``bounds(config)``."""
    best = b["joint_gain"][1]
    result: dict[str, Any] = {
        "bounds": {k: [Figure.of(lo).value, Figure.of(hi).value] for k, (lo, hi) in b.items()},
        "no_deal": state.ended is not None and state.ended.status == Status.NO_AGREEMENT,
        "deal": None,
    }
    status = state.ended.status if state.ended else None
    if status == Status.AGREEMENT and state.deal is not None:
        terms = state.deal.terms
        result["deal"] = {
            "terms": {t.name: f"{terms[t.name]:.{config.decimals}f}" for t in config.terms},
            "offer_id": state.deal.offer_id,
            "proposer": state.deal.proposer,
            "acceptor": state.acceptor,
        }
        utilities = {r: utility(config, r, terms) for r in config.roles}
    elif status == Status.NO_AGREEMENT:
        utilities = {r: fallback(config, r) for r in config.roles}
    else:
        scored = (*_SCORED, f"{config.share_role}_share_of_joint_gain")
        return result | dict.fromkeys(scored) | {"below_fallback": []}
    gains = {r: u - fallback(config, r) for r, u in utilities.items()}
    joint_gain = sum(gains.values(), Fraction(0))
    share = gains[config.share_role] / joint_gain if joint_gain else None
    efficiency = joint_gain / best if best else None
    return result | {
        "utilities": {r: figure(u) for r, u in utilities.items()},
        "gains": {r: figure(g) for r, g in gains.items()},
        "joint": figure(sum(utilities.values(), Fraction(0))),
        "joint_gain": figure(joint_gain),
        "efficiency": figure(efficiency) if status == Status.AGREEMENT and efficiency is not None else None,
        "efficiency_all_assigned": figure(efficiency) if efficiency is not None else None,
        f"{config.share_role}_share_of_joint_gain": figure(share) if share is not None else None,
        "below_fallback": [r for r in config.roles if utilities[r] < fallback(config, r)],
    }


_SCORED = ("utilities", "gains", "joint", "joint_gain", "efficiency", "efficiency_all_assigned")



def per_game(record: dict[str, Any]) -> dict[str, Any]:
    """One journaled game as flat figures: the multi-issue columns of ``metrics_per_game``."""
    out = record["outcome"]
    deal = out.get("deal") or {}
    row: dict[str, Any] = {
        "no_deal": bool(out.get("no_deal")),
        "proposer": deal.get("proposer"),
        "acceptor": deal.get("acceptor"),
        "offer_id": deal.get("offer_id"),
    }
    for name, value in (deal.get("terms") or {}).items():
        row[f"deal_{name}"] = float(value)
    for key, prefix in (("utilities", "utility"), ("gains", "gain")):
        for role, fig in (out.get(key) or {}).items():
            row[f"{prefix}_{role}"] = value_of(fig)
    for key in ("joint", "joint_gain", "efficiency", "efficiency_all_assigned"):
        row[key] = value_of(out.get(key))
    for key, fig in out.items():
        if key.endswith("_share_of_joint_gain"):
            row[key] = value_of(fig)
    scored = out.get("utilities") is not None
    row["below_fallback"] = len(out.get("below_fallback") or []) if scored else None
    return row


FIELDS = {
    "no_deal": "the game ended without agreement (each side gets its no-agreement points)",
    "proposer": "role whose offer was accepted",
    "acceptor": "role that accepted",
    "offer_id": "id of the accepted offer (O<turn>)",
    "deal_*": "agreed value of each negotiated term",
    "utility_*": "points of each role under the deal (no-agreement points if no deal), from the exact fraction",
    "gain_*": "utility minus the role's no-agreement points",
    "joint": "sum of both utilities",
    "joint_gain": "sum of both gains",
    "efficiency": "joint gain / best possible joint gain, deals only",
    "efficiency_all_assigned": "joint gain / best possible joint gain, no deal counted as 0",
    "*_share_of_joint_gain": "that role's gain / joint gain",
    "below_fallback": "number of roles left below their no-agreement points",
    "pareto_optimal": "the deal lies on the exact Pareto frontier",
    "dist_pareto": "Euclidean distance in utility points from the deal to the exact Pareto frontier",
    "dist_nash": "distance to the Nash point (the frontier deal with the largest product of gains over no agreement)",
    "dist_ks": "distance to the Kalai-Smorodinsky point (the frontier deal giving both roles the same share of "
               "their best possible gain over no agreement)",
    "dist_kalai": "distance to the Kalai (egalitarian) point (the frontier deal with the largest equal gain "
                  "over no agreement)",
    "dist_max_welfare": "distance to the nearest deal with the best joint utility",
    "pareto_optimality": "1 - dist_pareto / the diagonal of the utility ranges (negmas' pareto_optimality)",
    "nash_optimality": "1 - dist_nash / the diagonal of the utility ranges (negmas' nash_optimality)",
    "ks_optimality": "1 - dist_ks / the diagonal of the utility ranges (negmas' ks_optimality)",
    "kalai_optimality": "1 - dist_kalai / the diagonal of the utility ranges (negmas' kalai_optimality)",
    "max_welfare_optimality": "the deal's joint utility / the best joint utility of any deal on the frontier "
                              "(negmas' max_welfare_optimality: a ratio of welfare, not a distance)",
}
"""What each ``per_game`` column means, for the dataset card (``*`` stands for a role or term)."""

RESULTS = Results(
    title="Two-party multi-issue alternating offers (seeds 000, 001)",
    headline=("agreement", "efficiency", "joint_gain", "dist_pareto"),
    by_cell=("agreement", "efficiency", "efficiency_all_assigned", "joint_gain", "rounds_to_agreement", "dist_pareto",
             "dist_nash", "format_failure"),
    by_role=(RoleFigure(column="gain_{role}", label="gain over no agreement"),),
    length=Length(column="rounds_to_agreement", label="turns to agreement"),
    deal=("deal_*",),
)
"""The report's section: each model's gain in each role against the other's, efficiency and the deal's distance
to the Pareto frontier by cell."""
