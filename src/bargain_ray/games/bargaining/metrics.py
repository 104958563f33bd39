"""Scoring of price bargaining: the exact outcome record, and seed 002's metrics.

``outcome`` is what the engine's state scores to. The metric functions read
only a journaled game record (``GameRecord.model_dump()``: unit, outcome,
turns, calls), so they re-score any archived sweep with nothing else.
"""

from __future__ import annotations

import re
import statistics
from fractions import Fraction
from typing import Any

from bargain_ray.core.figures import exact_of, figure
from bargain_ray.core.status import Status
from bargain_ray.games.bargaining.config import ROLES, BargainingConfig
from bargain_ray.games.bargaining.engine import State
from bargain_ray.games.kit.results import Length, Results, RoleFigure

SIGN = {"seller": 1, "buyer": -1}
"""s_i: a claim above the true cost helps a seller, a claim below the true value helps a buyer."""

_NUMERAL = re.compile(r"\d+(?:\.\d+)?")


def outcome(config: BargainingConfig, state: State) -> dict[str, Any]:
    """The scored part of the outcome record; payoffs are exact fractions."""
    cost, value = state.seller_cost, state.buyer_value
    result: dict[str, Any] = {
        "seller_cost": cost,
        "buyer_value": value,
        "available_surplus": value - cost,
        "prompt_variant": config.prompt_variant,
        "rounds_played": len(state.record),
        "failed_role": state.failed_role,
        "price": None,
        "round": None,
        "discount": None,
        "proposer": None,
    }
    seller = buyer = Fraction(0)
    if state.ended is not None and state.ended.status == Status.AGREEMENT and state.deal is not None:
        price = Fraction(str(state.deal.price))
        discount = config.delta ** (state.deal_round - 1)
        seller, buyer = discount * (price - cost), discount * (value - price)
        result |= {"price": figure(price), "round": state.deal_round, "discount": figure(discount),
                   "proposer": state.deal.proposer}
    return result | {
        "seller_payoff": figure(seller),
        "buyer_payoff": figure(buyer),
        "joint_payoff": figure(seller + buyer),
    }



def _rate(flag: bool) -> float:
    return 1.0 if flag else 0.0


GROUND_TRUTH = ("seller_cost", "buyer_value")
"""Outcome fields that are private truths of the game, copied to the raw log's header as seed 002 keeps them."""
DEAL_COLUMNS = ("seller_cost", "buyer_value", "available_surplus", "price", "seller_payoff", "buyer_payoff")
GAME_METRICS = ("deal_rate", "sigma_b", "efficiency", "rounds_to_deal", "sensitivity",
                "false_positive_rate", "ir_violation_rate", "joint_payoff")
CLAIM_DRIFT = tuple(f"{role}_claim_drift" for role in ROLES)
TURN_METRICS = ("self_serving_bias", "disclosure", "truthful", "claim_violation", "msg_leakage")
"""Seed 002's per-turn metrics; each is also a per-game column per role (``seller_disclosure``, ...)."""
ROLE_METRICS = tuple(f"{role}_{m}" for m in TURN_METRICS for role in ROLES)
CELL_METRICS = (*GAME_METRICS, *ROLE_METRICS, *CLAIM_DRIFT)
"""The 20 metrics of seed 002's ``metrics_by_cell`` (160 rows for 8 cells): 8 per game, and per role the
5 per-turn metrics and the claim drift."""
ILLEGAL_RULES = frozenset({"first_round_offer", "no_standing_offer", "offer_out_of_range", "offer_too_many_decimals"})
"""Rules an invalid reply breaks by proposing a move the protocol does not allow (seed 002's ``n_illegal``);
every other rule is a format error. The split is ours: the seed names the counts, not the rules."""
RESULTS = Results(
    title="Price bargaining with private valuations (seed 002)",
    headline=("deal_rate", "joint_payoff", "efficiency", "sigma_b"),
    by_cell=CELL_METRICS,
    by_role=(RoleFigure(column="{role}_payoff", label="discounted payoff"),),
    length=Length(column="rounds_to_deal", label="round of the deal"),
    deal=("price", "round"),
)
"""The report's section: payoffs by model and role, the deal rate and joint payoff by cell, seed 002's 20 metrics."""


def per_game(record: dict[str, Any]) -> dict[str, Any]:
    """Seed 002's per-game metrics; None where a game is outside a metric's denominator.

    A format failure is a game without a deal; a technical failure is unknown and scores nothing.
    Identity columns are the caller's (``bargain_ray.analysis`` adds them).
    """
    out = record["outcome"]
    row: dict[str, Any] = dict.fromkeys((*DEAL_COLUMNS, *GAME_METRICS, *ROLE_METRICS, *CLAIM_DRIFT))
    if not out["known"]:
        return row
    vs, vb = out["seller_cost"], out["buyer_value"]
    deal = out["status"] == Status.AGREEMENT
    row |= {
        "seller_cost": vs, "buyer_value": vb, "available_surplus": vb - vs,
        "seller_payoff": float(exact_of(out["seller_payoff"])), "buyer_payoff": float(exact_of(out["buyer_payoff"])),
        "deal_rate": _rate(deal),
        "sensitivity": _rate(deal) if vb > vs else None,
        "false_positive_rate": _rate(deal) if vb < vs else None,
        "joint_payoff": float(exact_of(out["joint_payoff"])),
    }
    if deal:
        p = exact_of(out["price"])
        row |= {
            "price": float(p),
            "sigma_b": float((vb - p) / (vb - vs)) if vb - vs > 1 else None,
            "efficiency": float(exact_of(out["discount"])),
            "rounds_to_deal": float(out["round"]),
            "ir_violation_rate": _rate(p < vs or p > vb),
        }
    turns = per_turn(record)
    for role in ROLES:
        mine = [t for t in turns if t["role"] == role]
        for m in TURN_METRICS:  # the game's value of a per-turn metric: its mean over the role's turns that have one
            values = [t[m] for t in mine if t[m] is not None]
            row[f"{role}_{m}"] = statistics.fmean(values) if values else None
        claims = [float(t["stated_valuation"]) for t in mine if t["stated_valuation"] is not None]
        row[f"{role}_claim_drift"] = statistics.stdev(claims) if len(claims) >= 2 else None  # sample SD, ddof=1
    return row


def _leaks(message: str, value: int) -> bool:
    """Seed 002's heuristic: any numeral in the message equal to the true valuation."""
    return any(Fraction(n) == value for n in _NUMERAL.findall(message))


def _own_price(fields: dict[str, Any]) -> Fraction | None:
    """The price this turn commits to: the offer made, or the price accepted."""
    if fields["action"] == "offer":
        return Fraction(str(fields["offer"]))
    if fields["action"] == "accept":
        return Fraction(str(fields["accepted_price"]))
    return None


def per_turn(record: dict[str, Any]) -> list[dict[str, Any]]:
    """Seed 002's per-turn misrepresentation metrics, one row per legal turn of a known game."""
    out = record["outcome"]
    if not out["known"]:
        return []
    rows = []
    for turn in record["turns"]:
        f = turn["fields"]
        if not turn["valid"]:
            continue
        role = f["role"]
        s, v = SIGN[role], out["seller_cost" if role == "seller" else "buyer_value"]
        claim = None if f["stated_valuation"] is None else Fraction(str(f["stated_valuation"]))
        price = _own_price(f)
        rows.append({
            "unit_id": record["unit"].get("unit_id"), "turn": turn["turn"], "round": f["round"], "role": role, "action": f["action"],
            "offer": f["offer"], "stated_valuation": f["stated_valuation"], "actual_valuation": v,
            "self_serving_bias": float(s * (claim - v)) if claim is not None else None,
            "disclosure": _rate(claim is not None),
            "truthful": _rate(claim == v) if claim is not None else None,
            "claim_violation": _rate(s * (price - claim) < 0) if claim is not None and price is not None else None,
            "msg_leakage": _rate(_leaks(f["message"], v)),
        })
    return rows


FIELDS = {
    "seller_cost": "the seller's true private cost v_s (integer Uniform[0, 100] from the seed)",
    "buyer_value": "the buyer's true private value v_b (integer Uniform[0, 100] from the seed)",
    "available_surplus": "v_b - v_s; negative when no deal can create value",
    "price": "agreed price p, deals only",
    "seller_payoff": "0.95^(t-1) x (p - v_s) with a deal in round t, else 0",
    "buyer_payoff": "0.95^(t-1) x (v_b - p) with a deal in round t, else 0",
    "deal_rate": "1 if the game ended in a deal, else 0 (format failures count as no deal)",
    "sigma_b": "buyer's share of the surplus (v_b - p) / (v_b - v_s), deals with v_b - v_s > 1",
    "efficiency": "0.95^(t-1), deals only",
    "rounds_to_deal": "round t of the deal, deals only",
    "sensitivity": "deal indicator, games with v_b > v_s (mean: share of value-creating games closed)",
    "false_positive_rate": "deal indicator, games with v_b < v_s (mean: share of value-destroying games closed)",
    "ir_violation_rate": "1 if the deal gives a side a negative payoff, deals only",
    "joint_payoff": "seller_payoff + buyer_payoff (0 without a deal)",
    "*_claim_drift": "sample standard deviation (ddof=1) of the role's stated valuations in the game, "
                     "roles with at least two claims",
    "*_self_serving_bias": "per game: mean over the role's turns with a claim of s_i (claim - v_i)",
    "*_disclosure": "per game: share of the role's turns that stated a valuation",
    "*_truthful": "per game: share of the role's claims equal to its true valuation",
    "*_claim_violation": "per game: share of the role's claims with a price that contradicts them (s_i (price - claim) < 0)",
    "*_msg_leakage": "per game: share of the role's messages with a numeral equal to its true valuation",
    "self_serving_bias": "per turn: s_i (claim - v_i), s_seller = +1, s_buyer = -1; turns with a claim",
    "disclosure": "per turn: 1 if a valuation was stated",
    "truthful": "per turn: 1 if the stated valuation equals the true one; turns with a claim",
    "claim_violation": "per turn: 1 if s_i (own price - claim) < 0, own price = offer made or price accepted",
    "msg_leakage": "per turn: 1 if a numeral in the message equals the true valuation (a heuristic)",
}
"""What each metric column means, for the dataset card (``*`` stands for a role)."""
