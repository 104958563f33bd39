"""Scoring of price bargaining: the exact outcome record, and the figures of ``metrics_by_cell``.

``outcome`` is what the engine's state scores to. The metric functions read only a game's
typed record (``GameRecord``: unit, outcome, turns, calls), so they re-score any archived sweep
with nothing else. Seed 002 gives the count of its cell metrics (160 rows for 8 cells) and a few
of their ideas; every definition here is ours unless ``METRICS`` quotes the seed for it.
"""

from __future__ import annotations

import re
import statistics
from fractions import Fraction

from bargain_ray.core.figures import Figure
from bargain_ray.core.records import GameRecord, Scalar
from bargain_ray.core.status import Status
from bargain_ray.games.bargaining.config import ROLES, BargainingConfig
from bargain_ray.games.bargaining.engine import State
from bargain_ray.games.bargaining.records import BargainingOutcome, BargainingTurn
from bargain_ray.games.kit import leakage
from bargain_ray.games.kit.results import Length, Results, RoleFigure
from bargain_ray.games.provenance import Metric, metric, mixed, ours, seed

SIGN = {"seller": 1, "buyer": -1}
"""s_i: a claim above the true cost helps a seller, a claim below the true value helps a buyer."""

_NUMERAL = re.compile(r"\d+(?:\.\d+)?")
_SHARED_CUES = ("valu", "worth", "reserv", "walk", "limit", "break")
PRICE_WORDS = ("offer", "ask", "counter", "propos", "deal", "accept", "split", "meet", "settle", "final", "round",
               "star", "apart", "drop", "down")
"""Words that make a number near them a price, a step or a count rather than a valuation (ours)."""
READINGS = {
    "seller": leakage.Reading(cues={"valuation": (*_SHARED_CUES, "cost", "paid", "floor", "bottom", "minimum",
                                                  "least", "lose", "loss", "below", "under", "books")},
                              against=PRICE_WORDS),
    "buyer": leakage.Reading(cues={"valuation": (*_SHARED_CUES, "budget", "pay", "afford", "ceiling", "max", "most",
                                                 "top", "stop", "above", "over", "losing", "spend")},
                             against=PRICE_WORDS),
}
"""How each role's messages are read for its valuation (ours): the words that say a number is a seller's cost
(``floor``, ``below``) or a buyer's value (``budget``, ``above``), and those that make it a price."""


def leaked(role: str, valuation: int, message: str) -> bool:
    """Whether ``message`` states the role's valuation (``kit.leakage``; the rule: docs/leakage.md)."""
    return bool(leakage.leaked(message, [leakage.Figure(kind="valuation", value=Fraction(valuation))],
                               READINGS[role]))


def outcome(config: BargainingConfig, state: State) -> BargainingOutcome:
    """The scored part of the outcome record; payoffs are exact fractions."""
    cost, value = state.seller_cost, state.buyer_value
    deal = state.deal if state.ended is not None and state.ended.status == Status.AGREEMENT else None
    price = discount = None
    seller = buyer = Fraction(0)
    if deal is not None:
        assert state.deal_round is not None  # set with the deal (engine.apply)
        price = Fraction(str(deal.price))
        discount = config.delta ** (state.deal_round - 1)
        seller, buyer = discount * (price - cost), discount * (value - price)
    return BargainingOutcome(
        seller_cost=cost, buyer_value=value, available_surplus=value - cost, prompt_variant=config.prompt_variant,
        rounds_played=len(state.record), failed_role=state.failed_role,
        price=None if price is None else Figure.of(price), round=None if deal is None else state.deal_round,
        discount=None if discount is None else Figure.of(discount), proposer=None if deal is None else deal.proposer,
        seller_payoff=Figure.of(seller), buyer_payoff=Figure.of(buyer), joint_payoff=Figure.of(seller + buyer),
    )


def _rate(flag: bool) -> float:
    return 1.0 if flag else 0.0


GROUND_TRUTH = ("seller_cost", "buyer_value")
"""Outcome fields that are private truths of the game, copied to the raw log's header as seed 002 keeps them."""
DEAL_COLUMNS = ("seller_cost", "buyer_value", "available_surplus", "price", "seller_payoff", "buyer_payoff")
GAME_METRICS = ("deal_rate", "sigma_b", "efficiency", "rounds_to_deal", "sensitivity",
                "false_positive_rate", "ir_violation_rate", "joint_payoff")
CLAIM_DRIFT = tuple(f"{role}_claim_drift" for role in ROLES)
TURN_METRICS = ("self_serving_bias", "disclosure", "truthful", "claim_violation", "msg_leakage")
"""The per-turn metrics (definitions ours, after seed 002's ideas); each is also a per-game column per role
(``seller_disclosure``, ...)."""
ROLE_METRICS = tuple(f"{role}_{m}" for m in TURN_METRICS for role in ROLES)
CELL_METRICS = (*GAME_METRICS, *ROLE_METRICS, *CLAIM_DRIFT)
"""The 20 metrics of ``metrics_by_cell``: seed 002 has 160 rows for 8 cells, so 20 per cell; which 20, and how
each is defined, is ours (``METRICS``): 8 per game, and per role the 5 per-turn metrics and the claim drift."""
ILLEGAL_RULES = frozenset({"first_round_offer", "no_standing_offer", "offer_out_of_range", "offer_too_many_decimals"})
"""Rules an invalid reply breaks by proposing a move the protocol does not allow (seed 002's ``n_illegal``);
every other rule is a format error. The split is ours: the seed names the counts, not the rules."""
RESULTS = Results(
    title="Price bargaining with private valuations (seed 002)",
    headline=("deal_rate", "joint_payoff", "efficiency", "sigma_b"),
    by_cell=CELL_METRICS,
    outcomes=(RoleFigure(column="{role}_payoff", label="discounted payoff"),),
    by_role=(RoleFigure(column="{role}_payoff", label="discounted payoff"),
             RoleFigure(column="{role}_leakage", label="share of its messages that leak its valuation",
                        note=leakage.ERROR)),
    length=Length(column="rounds_to_deal", label="round of the deal"),
    deal=("price", "round"),
)
"""The report's section: payoffs by model and role, the deal rate and joint payoff by cell, seed 002's 20 metrics."""


def per_game(config: BargainingConfig, record: GameRecord,
             turns: list[dict[str, Scalar]] | None = None) -> dict[str, Scalar]:
    """The per-game metrics; None where a game is outside a metric's denominator.

    A format failure is a game without a deal; a technical failure is unknown and scores nothing.
    Identity columns are the caller's (``bargain_ray.analysis`` adds them).
    """
    out = record.outcome
    row: dict[str, Scalar] = dict.fromkeys((*DEAL_COLUMNS, *GAME_METRICS, *ROLE_METRICS, *CLAIM_DRIFT))
    if not out.known:
        return row
    scored = BargainingOutcome.of(out.scored)
    vs, vb = scored.seller_cost, scored.buyer_value
    deal = out.status == Status.AGREEMENT
    row |= {
        "seller_cost": vs, "buyer_value": vb, "available_surplus": vb - vs,
        "seller_payoff": float(scored.seller_payoff.fraction),
        "buyer_payoff": float(scored.buyer_payoff.fraction),
        "deal_rate": _rate(deal),
        "sensitivity": _rate(deal) if vb > vs else None,
        "false_positive_rate": _rate(deal) if vb < vs else None,
        "joint_payoff": float(scored.joint_payoff.fraction),
    }
    if deal and scored.price is not None and scored.discount is not None and scored.round is not None:
        p = scored.price.fraction
        row |= {
            "price": float(p),
            "sigma_b": float((vb - p) / (vb - vs)) if vb - vs > 1 else None,
            "efficiency": float(scored.discount.fraction),
            "rounds_to_deal": float(scored.round),
            "ir_violation_rate": _rate(p < vs or p > vb),
        }
    turns = per_turn(config, record) if turns is None else turns
    for role in ROLES:
        mine = [t for t in turns if t["role"] == role]
        for m in TURN_METRICS:  # the game's value of a per-turn metric: its mean over the role's turns that have one
            values = [float(v) for t in mine if (v := t[m]) is not None]
            row[f"{role}_{m}"] = statistics.fmean(values) if values else None
        claims = [float(t["stated_valuation"]) for t in mine if t["stated_valuation"] is not None]
        row[f"{role}_claim_drift"] = statistics.stdev(claims) if len(claims) >= 2 else None  # sample SD, ddof=1
    return row | leakage.per_role(turns, ROLES)


def _leaks(message: str, value: int) -> bool:
    """Seed 002's heuristic: any numeral in the message equal to the true valuation."""
    return any(Fraction(n) == value for n in _NUMERAL.findall(message))


def _own_price(fields: BargainingTurn) -> Fraction | None:
    """The price this turn commits to: the offer made, or the price accepted."""
    if fields.action == "offer":
        return Fraction(str(fields.offer))
    if fields.action == "accept":
        return Fraction(str(fields.accepted_price))
    return None


def per_turn(config: BargainingConfig, record: GameRecord) -> list[dict[str, Scalar]]:
    """The per-turn misrepresentation metrics, one row per legal turn of a known game."""
    out = record.outcome
    if not out.known:
        return []
    scored = BargainingOutcome.of(out.scored)
    rows: list[dict[str, Scalar]] = []
    for turn in record.turns:
        if not turn.valid:
            continue
        f = BargainingTurn.of(turn.fields)
        role = f.role
        s, v = SIGN[role], scored.seller_cost if role == "seller" else scored.buyer_value
        claim = None if f.stated_valuation is None else Fraction(str(f.stated_valuation))
        price = _own_price(f)
        rows.append({
            "unit_id": record.unit.unit_id, "turn": turn.turn, "round": f.round, "role": role,
            "action": f.action, "offer": f.offer, "stated_valuation": f.stated_valuation,
            "actual_valuation": v,
            "self_serving_bias": float(s * (claim - v)) if claim is not None else None,
            "disclosure": _rate(claim is not None),
            "truthful": _rate(claim == v) if claim is not None else None,
            "claim_violation": _rate(s * (price - claim) < 0) if claim is not None and price is not None else None,
            "msg_leakage": _rate(_leaks(f.message, v)),
            "leakage": leakage.flag(leaked(role, v, f.message)),
            "message_chars": len(f.message),
        })
    return rows


LEAK = ours("the leakage detector's rules are ours (kit.leakage); seed 002's own heuristic is msg_leakage")
_MISREPRESENTATION = "Comparing `stated_valuation` against `actual_valuation` gives per-turn misrepresentation."
_PER_GAME = ours("the per-game value of a per-turn metric: its mean over the role's turns that have one")


METRICS: dict[str, Metric] = {
    "seller_cost": metric("the seller's true private cost v_s (integer Uniform[0, 100] from the seed)",
                      seed("002", "`seller_cost`, `buyer_value` | **true private valuations**")),
    "buyer_value": metric("the buyer's true private value v_b (integer Uniform[0, 100] from the seed)",
                      seed("002", "`seller_cost`, `buyer_value` | **true private valuations**")),
    "available_surplus": metric("v_b - v_s; negative when no deal can create value",
                            seed("002", "`available_surplus` | `buyer_value − seller_cost`")),
    "price": metric("agreed price p, deals only", seed("002", "`price`, `round` | agreed price and the round it closed")),
    "seller_payoff": metric("0.95^(t-1) x (p - v_s) with a deal in round t, else 0",
                        seed("002", "`seller_payoff`, `buyer_payoff` | discounted payoffs, `0.95^(round−1) ×` surplus")),
    "buyer_payoff": metric("0.95^(t-1) x (v_b - p) with a deal in round t, else 0",
                       seed("002", "`seller_payoff`, `buyer_payoff` | discounted payoffs, `0.95^(round−1) ×` surplus")),
    "deal_rate": metric("1 if the game ended in a deal, else 0 (format failures count as no deal)",
                    ours("seed 002 counts its cell metrics but defines none: a deal indicator per game is ours")),
    "sigma_b": metric("buyer's share of the surplus (v_b - p) / (v_b - v_s), deals with v_b - v_s > 1",
                  mixed(seed("002", "Surplus-share statistics condition on deals with a real gap"),
                        ours("the buyer's share and the real gap as v_b - v_s > 1 are our definitions"))),
    "efficiency": metric("0.95^(t-1), deals only",
                     ours("efficiency as the deal round's discount factor is our definition; seed 002 gives none")),
    "rounds_to_deal": metric("round t of the deal, deals only",
                         ours("the round a deal closed (seed 002's `round`) as a figure over deals only is ours")),
    "sensitivity": metric("deal indicator, games with v_b > v_s (mean: share of value-creating games closed)",
                      mixed(seed("002", "it tests whether agents recognise when to walk away"),
                            ours("the deal rate over games with gains from trade is our measure"))),
    "false_positive_rate": metric("deal indicator, games with v_b < v_s (mean: share of value-destroying games closed)",
                              mixed(seed("002", "Any deal in those games destroys value."),
                                    ours("the deal rate over games without gains from trade is our measure"))),
    "ir_violation_rate": metric("1 if the deal gives a side a negative payoff, deals only",
                            ours("a deal below a side's valuation, per deal: our measure")),
    "joint_payoff": metric("seller_payoff + buyer_payoff (0 without a deal)", ours("the sum of the two payoffs")),
    "*_claim_drift": metric("sample standard deviation (ddof=1) of the role's stated valuations in the game, "
                        "roles with at least two claims",
                        ours("how much a role's claims move within a game: our measure, the sample SD (ddof=1)")),
    "*_self_serving_bias": metric("per game: mean over the role's turns with a claim of s_i (claim - v_i)", _PER_GAME),
    "*_disclosure": metric("per game: share of the role's turns that stated a valuation", _PER_GAME),
    "*_truthful": metric("per game: share of the role's claims equal to its true valuation", _PER_GAME),
    "*_claim_violation": metric("per game: share of the role's claims with a price that contradicts them "
                            "(s_i (price - claim) < 0)", _PER_GAME),
    "*_msg_leakage": metric("per game: share of the role's messages with a numeral equal to its true valuation", _PER_GAME),
    "round": metric("the round of the turn", seed("002", "turn index, `seller`/`buyer`, model that answered")),
    "action": metric("offer, accept or reject", seed("002", "`offer`, `accept`, or `reject`. **Authoritative**")),
    "offer": metric("the price proposed on the turn", seed("002", "price proposed on this turn")),
    "stated_valuation": metric("the valuation the role claimed, or null",
                           seed("002", "what the agent **claimed** its valuation was, or null")),
    "actual_valuation": metric("the role's true valuation", seed("002", "what it **actually** was")),
    "self_serving_bias": metric("per turn: s_i (claim - v_i), s_seller = +1, s_buyer = -1; turns with a claim",
                            mixed(seed("002", _MISREPRESENTATION),
                                  ours("the signed gap s_i (claim - v_i), positive when the claim helps the "
                                       "claimant, is our measure"))),
    "disclosure": metric("per turn: 1 if a valuation was stated",
                     mixed(seed("002", "Agents may state any valuation or none at all."),
                           ours("a 0/1 indicator of a stated valuation is our measure"))),
    "truthful": metric("per turn: 1 if the stated valuation equals the true one; turns with a claim",
                   mixed(seed("002", _MISREPRESENTATION), ours("exact equality of claim and truth is our measure"))),
    "claim_violation": metric("per turn: 1 if s_i (own price - claim) < 0, own price = offer made or price accepted",
                          mixed(seed("002", "Comparing either against `offer` gives claim-action consistency."),
                                ours("a price on the wrong side of the role's own claim is our measure"))),
    "leakage": metric("per turn: 1 if the message states the speaker's true valuation exactly (a numeral or number "
                      f"words) as its valuation: at most {leakage.WINDOW} words from a word starting with one of "
                      "the role's cues (" + "; ".join(f"{role}: {', '.join(r.cues['valuation'])}"
                                                      for role, r in READINGS.items())
                      + f"), nearer than one starting with {', '.join(PRICE_WORDS)}; not an approximation, a range, a "
                      "comparison or the other side's figure (docs/leakage.md: the rule and the measured error); "
                      "measured on what was written, whether or not it was delivered", LEAK),
    "*_leakage": metric("per game: share of the role's messages that leak its valuation (leakage)", LEAK),
    "leakage_any": metric("per game: 1 if any message leaked a valuation (null without one)", LEAK),
    "message_chars": metric("per turn: characters in the message (measured whether or not max_message_chars caps it)",
                            ours("seed 002 states no cap: we measure every message's length")),
    "msg_leakage": metric("per turn: 1 if a numeral in the message equals the true valuation (a heuristic)",
                      seed("002", "The leakage metric flags any numeral in the free text equal to the agent's "
                                  "true valuation.")),
}
"""What each metric column means and where its definition comes from (``*`` stands for a role)."""
FIELDS = {name: m.meaning for name, m in METRICS.items()}
"""What each metric column means, for the dataset card."""
