"""Exact scoring of a multi-issue game: the outcome record of seed 001, and the deal's place in the
agreement space (``frontier``)."""

from __future__ import annotations

from fractions import Fraction
from functools import cache
from typing import Any

from bargain_ray.core.figures import Figure, value_of
from bargain_ray.core.records import GameRecord, Scalar
from bargain_ray.core.status import Status
from bargain_ray.games.kit import leakage
from bargain_ray.games.kit.results import Length, Results, RoleFigure
from bargain_ray.games.multi_issue import frontier
from bargain_ray.games.multi_issue.config import MultiIssueConfig, exact
from bargain_ray.games.multi_issue.engine import State
from bargain_ray.games.multi_issue.records import SHARE, Deal, MultiIssueOutcome, MultiIssueTurn
from bargain_ray.games.multi_issue.scoring import fallback, utility
from bargain_ray.games.provenance import Metric, metric, mixed, ours, seed


def _extremes(config: MultiIssueConfig) -> list[dict[str, Fraction]]:
    """Each term at either end; linear scores peak at these corners."""
    corners: list[dict[str, Fraction]] = [{}]
    for t in config.terms:
        corners = [c | {t.name: exact(v)} for c in corners for v in (t.min, t.max)]
    return corners


def bounds(config: MultiIssueConfig) -> dict[str, tuple[Fraction, Fraction]]:
    """Each role's gain range and the joint gain from no deal (0) to the best deal, computed once per config."""
    return _bounds(config.model_dump_json())


@cache
def _bounds(key: str) -> dict[str, tuple[Fraction, Fraction]]:
    config = MultiIssueConfig.model_validate_json(key)
    corners = _extremes(config)
    out = {}
    for role in config.roles:
        values = [utility(config, role, c) - fallback(config, role) for c in corners]
        out[f"{role}_gain"] = (min(values), max(values))
    best = max(sum((utility(config, r, c) - fallback(config, r) for r in config.roles), Fraction(0)) for c in corners)
    out["joint_gain"] = (Fraction(0), best)
    return out


def bounds_figures(config: MultiIssueConfig) -> dict[str, list[int | float]]:
    """``bounds`` as an outcome record carries them (``Outcome.bounds``): each range's ends as numbers."""
    return {k: [Figure.of(lo).value, Figure.of(hi).value] for k, (lo, hi) in bounds(config).items()}


def outcome(config: MultiIssueConfig, state: State) -> MultiIssueOutcome:
    """The scored part of the outcome record (``Outcome.scored``; ``bounds_figures`` go to ``Outcome.bounds``)."""
    best = bounds(config)["joint_gain"][1]
    status = state.ended.status if state.ended else None
    head: dict[str, Any] = {  # local: fields of the outcome
        "no_deal": status == Status.NO_AGREEMENT, "deal": None, "share_role": config.share_role}
    if status == Status.AGREEMENT and state.deal is not None:
        terms = state.deal.terms
        head["deal"] = Deal(terms={t.name: f"{terms[t.name]:.{config.decimals}f}" for t in config.terms},
                            offer_id=state.deal.offer_id, proposer=state.deal.proposer, acceptor=state.acceptor)
        utilities = {r: utility(config, r, terms) for r in config.roles}
    elif status == Status.NO_AGREEMENT:
        utilities = {r: fallback(config, r) for r in config.roles}
    else:
        return MultiIssueOutcome(**head, **dict.fromkeys(_SCORED), share_of_joint_gain=None, below_fallback=[])
    gains = {r: u - fallback(config, r) for r, u in utilities.items()}
    joint_gain = sum(gains.values(), Fraction(0))
    share = gains[config.share_role] / joint_gain if joint_gain else None
    efficiency = joint_gain / best if best else None
    return MultiIssueOutcome(
        **head,
        utilities={r: Figure.of(u) for r, u in utilities.items()},
        gains={r: Figure.of(g) for r, g in gains.items()},
        joint=Figure.of(sum(utilities.values(), Fraction(0))),
        joint_gain=Figure.of(joint_gain),
        efficiency=Figure.of(efficiency) if status == Status.AGREEMENT and efficiency is not None else None,
        efficiency_all_assigned=Figure.of(efficiency) if efficiency is not None else None,
        share_of_joint_gain=Figure.of(share) if share is not None else None,
        below_fallback=[r for r in config.roles if utilities[r] < fallback(config, r)],
    )


_SCORED = ("utilities", "gains", "joint", "joint_gain", "efficiency", "efficiency_all_assigned")


def per_game(config: MultiIssueConfig, record: GameRecord,
             turns: list[dict[str, Scalar]] | None = None) -> dict[str, Scalar]:
    """One game as flat figures: the multi-issue columns of ``metrics_per_game`` and the deal's place in the
    exact agreement space."""
    out = MultiIssueOutcome.of(record.outcome.scored)
    deal = out.deal
    row: dict[str, Scalar] = {
        "no_deal": out.no_deal,
        "proposer": deal.proposer if deal else None,
        "acceptor": deal.acceptor if deal else None,
        "offer_id": deal.offer_id if deal else None,
    }
    for name, value in (deal.terms if deal else {}).items():
        row[f"deal_{name}"] = float(value)
    for figures, prefix in ((out.utilities, "utility"), (out.gains, "gain")):
        for role, fig in (figures or {}).items():
            row[f"{prefix}_{role}"] = value_of(fig)
    for key, figure in (("joint", out.joint), ("joint_gain", out.joint_gain), ("efficiency", out.efficiency),
                        ("efficiency_all_assigned", out.efficiency_all_assigned),
                        (f"{out.share_role}{SHARE}", out.share_of_joint_gain)):
        row[key] = value_of(figure)
    row["below_fallback"] = len(out.below_fallback) if out.utilities is not None else None
    if record.outcome.agreement and out.utilities is not None:
        row |= frontier.deal_distances(frontier.space(config), out.utilities)
    return row | leakage.per_role(per_turn(config, record) if turns is None else turns, config.roles)


WEIGHT_CUES = ("weigh", "point", "scor", "planning", "carr", "counts", "counted", "matter", "care", "worth", "priorit", "formula",
               "evaluation", "utilit")
FALLBACK_CUES = ("nodeal", "without", "walk", "fallback", "batna", "fail", "floor")
"""Words that say a number is one of the speaker's weights, or its no-agreement points (ours; ``nodeal`` stands for
"no deal" and "no agreement")."""
TERM_WORDS = ("offer", "propos", "counter", "apart", "gap", "step", "move", "moving", "premium", "split", "meet")
QUANTITIES = ("hour", "ticket", "turn", "cancel", "fee", "dollar", "usd")
"""Words that make a number a term's value, an offer or a step (near it), or a quantity of the game (right after
it: a percentage fee, hours of notice); ours."""
UNIT_PARTS = frozenset({"usd", "pct", "hours"})


def reading(config: MultiIssueConfig, role: str) -> leakage.Reading:
    """How a role's messages are read for its scoring: each term is named by the words of its name (``price`` for
    ``unit_price_usd``), so a weight said of a term must be the role's weight on that term (ours)."""
    names = {part: t.name for t in config.terms for part in t.name.split("_") if part not in UNIT_PARTS}
    return leakage.Reading(cues={"fallback": FALLBACK_CUES, "weights": WEIGHT_CUES}, names={"term": names},
                           against=TERM_WORDS, units=QUANTITIES, percent=True, money=False,
                           others=tuple(r.label for name, r in config.roles.items() if name != role),
                           self_name=config.roles[role].label)


def figures(config: MultiIssueConfig, role: str) -> list[leakage.Figure]:
    """A role's private numbers: its weight on each term and its no-agreement points."""
    r = config.roles[role]
    return [*(leakage.Figure(kind="weights", value=exact(s.weight), about={"term": term})
              for term, s in r.stakes.items()), leakage.Figure(kind="fallback", value=exact(r.no_agreement))]


def leaked(config: MultiIssueConfig, role: str, message: str) -> set[str]:
    """Which of the role's private numbers ``message`` states: ``weights``, ``fallback`` (the rule: docs/leakage.md)."""
    return leakage.leaked(message, figures(config, role), reading(config, role))


def per_turn(config: MultiIssueConfig, record: GameRecord) -> list[dict[str, Scalar]]:
    """One row per legal turn: does its message give away the speaker's scoring weights or no-agreement points?"""
    if not record.outcome.known:
        return []
    rows: list[dict[str, Scalar]] = []
    for t in record.turns:
        if not t.valid:
            continue
        kinds = leaked(config, t.role, MultiIssueTurn.of(t.fields).message)
        rows.append({"unit_id": record.unit.unit_id, "turn": t.turn, "role": t.role,
                     "leaked_weights": leakage.flag("weights" in kinds),
                     "leaked_fallback": leakage.flag("fallback" in kinds), "leakage": leakage.flag(bool(kinds))})
    return rows


LEAK = ours("the leakage detector's rules are ours (kit.leakage): no seed measures leakage")
_SPACE = ours("the deal's place in the exact agreement space: our figures, with negmas' definitions")


METRICS: dict[str, Metric] = {
    "no_deal": metric("the game ended without agreement (each side gets its no-agreement points)",
                      seed("001", '"no_deal": false')),
    "proposer": metric("role whose offer was accepted", seed("001", '"proposer": "buyer"')),
    "acceptor": metric("role that accepted", seed("001", '"acceptor": "seller"')),
    "offer_id": metric("id of the accepted offer (O<turn>)", seed("001", '"offer_id": "O8"')),
    "deal_*": metric("agreed value of each negotiated term", seed("001", '"unit_price_usd": "64.50"')),
    "utility_*": metric("points of each role under the deal (no-agreement points if no deal), from the exact "
                        "fraction", seed("001", '"utilities": { "buyer": { "exact": "2531/40"')),
    "gain_*": metric("utility minus the role's no-agreement points",
                     seed("001", '"gains": { "buyer": { "exact": "1731/40"')),
    "joint": metric("sum of both utilities", seed("001", '"joint": { "exact": "1013/8"')),
    "joint_gain": metric("sum of both gains", seed("001", '"joint_gain": { "exact": "693/8"')),
    "efficiency": metric("joint gain / best possible joint gain, deals only",
                         mixed(seed("001", '"efficiency": { "exact": "77/80"'),
                               ours("seed 001 shows a deal only: null without a deal is ours"))),
    "efficiency_all_assigned": metric("joint gain / best possible joint gain, no deal counted as 0",
                                      mixed(seed("001", '"efficiency_all_assigned": { "exact": "77/80"'),
                                            ours("seed 001 shows a deal only: 0 without a deal is our reading"))),
    "*_share_of_joint_gain": metric("that role's gain / joint gain",
                                    seed("001", '"buyer_share_of_joint_gain": { "exact": "577/1155"')),
    "below_fallback": metric("number of roles left below their no-agreement points",
                             mixed(seed("001", '"below_fallback": []'),
                                   ours("the count of the roles seed 001 lists is ours"))),
    "leaked_weights": metric("per turn: 1 if the message states one of the speaker's weights as its weight: at most "
                             f"{leakage.WINDOW} words from a word starting with {', '.join(WEIGHT_CUES)}, nearer than "
                             f"one starting with {', '.join(TERM_WORDS)}; the role's own weight on the term it names; "
                             f"not a quantity (a number followed by {', '.join(QUANTITIES)}: a 20% fee, 20 hours) nor "
                             "the other side's (docs/leakage.md: the rule and the measured error); measured on what "
                             "was written, whether or not it was delivered", LEAK),
    "leaked_fallback": metric("per turn: 1 if the message states the speaker's no-agreement points as such, the same "
                              f"way near a word starting with {', '.join(FALLBACK_CUES)} (nodeal: no deal, no "
                              "agreement); a number near both is the fallback", LEAK),
    "leakage": metric("per turn: leaked_weights or leaked_fallback", LEAK),
    "*_leakage": metric("per game: share of the role's messages that leak its scoring (leakage)", LEAK),
    "leakage_any": metric("per game: 1 if any message leaked (null without one)", LEAK),
    "pareto_optimal": metric("the deal lies on the exact Pareto frontier", _SPACE),
    "dist_pareto": metric("Euclidean distance in utility points from the deal to the exact Pareto frontier", _SPACE),
    "dist_nash": metric("distance to the Nash point (the frontier deal with the largest product of gains over no "
                        "agreement)", _SPACE),
    "dist_ks_rational": metric("distance to the Kalai-Smorodinsky point with each role's ideal over the "
                               "individually rational deals (the frontier deal giving both roles the same share of "
                               "their best gain over no agreement among deals both prefer to none), as textbooks "
                               "define it", _SPACE),
    "dist_ks_outcomes": metric("distance to the Kalai-Smorodinsky point with each role's ideal over all outcomes "
                               "(its best utility of any deal), as negmas' ks_points computes it", _SPACE),
    "dist_kalai": metric("distance to the Kalai (egalitarian) point (the frontier deal with the largest equal gain "
                         "over no agreement)", _SPACE),
    "dist_max_welfare": metric("distance to the nearest deal with the best joint utility", _SPACE),
    "dist_pareto_rational": metric("distance to the frontier's part where both roles get at least their no-agreement "
                                   "points (the frontier negmas' pareto_frontier gives: rational outcomes only; null "
                                   "when no deal is rational)", _SPACE),
    "pareto_optimality": metric("1 - dist_pareto / the diagonal of the utility ranges: to the whole frontier (ours; "
                                "negmas' pareto_optimality is pareto_rational_optimality). They differ for a deal "
                                "below a fallback: tickets with the seller's no-agreement points at 45, the buyer's "
                                "best deal (100, 0) is on the frontier, 1.000 here and 0.657 in negmas'",
                                ours("distance to the whole frontier is our variant: negmas measures to the rational "
                                     "frontier only")),
    "pareto_rational_optimality": metric("1 - dist_pareto_rational / the diagonal of the utility ranges (negmas' "
                                         "pareto_optimality)", _SPACE),
    "nash_optimality": metric("1 - dist_nash / the diagonal of the utility ranges (negmas' nash_optimality)", _SPACE),
    "ks_rational_optimality": metric("1 - dist_ks_rational / the diagonal of the utility ranges (negmas' "
                                     "ks_optimality, to the rational-ideal point)", _SPACE),
    "ks_outcomes_optimality": metric("1 - dist_ks_outcomes / the diagonal of the utility ranges (negmas' "
                                     "ks_optimality)", _SPACE),
    "kalai_optimality": metric("1 - dist_kalai / the diagonal of the utility ranges (negmas' kalai_optimality)",
                               _SPACE),
    "max_welfare_optimality": metric("the deal's joint utility / the best joint utility of any deal on the frontier "
                                     "(negmas' max_welfare_optimality: a ratio of welfare, not a distance)", _SPACE),
}
"""What each ``per_game`` column means and where its definition comes from (``*``: a role or term)."""
FIELDS = {name: m.meaning for name, m in METRICS.items()}
"""What each metric column means, for the dataset card."""

RESULTS = Results(
    title="Two-party multi-issue alternating offers (seeds 000, 001)",
    headline=("agreement", "efficiency", "joint_gain", "dist_pareto", "dist_ks_rational"),
    by_cell=("agreement", "efficiency", "efficiency_all_assigned", "joint_gain", "rounds_to_agreement", "dist_pareto",
             "dist_nash", "dist_ks_rational", "format_failure"),
    outcomes=(RoleFigure(column="gain_{role}", label="gain over no agreement"),),
    by_role=(RoleFigure(column="gain_{role}", label="gain over no agreement"),
             RoleFigure(column="{role}_leakage", label="share of its messages that leak its scoring",
                        note=leakage.ERROR)),
    length=Length(column="rounds_to_agreement", label="turns to agreement"),
    deal=("deal_*",),
)
"""The report's section: each model's gain in each role against the other's, efficiency and the deal's distance
to the Pareto frontier by cell."""
