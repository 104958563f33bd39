"""Agreement-space solution points (Nash, Kalai-Smorodinsky, Kalai) and negmas' optimalities, exactly.

Each figure is checked against an independent computation: a brute-force grid of tickets deals for the
points, the definitions written out by hand for seed 001's deal.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from helpers import DATA, game_config

from bargain_ray.games import load_game
from bargain_ray.games.multi_issue import frontier
from bargain_ray.play.rescore import ReplayFile, replay_transcript


def tickets():
    return load_game(game_config("tickets"))


def grid_deals() -> tuple[np.ndarray, np.ndarray]:
    """(buyer, seller) utilities of every tickets deal on a 41-point grid per term, from the YAML's stakes."""
    conf = game_config("tickets")
    grid = np.linspace(0, 1, 41)
    shares = dict(zip([t["name"] for t in conf["terms"]], np.meshgrid(grid, grid, grid), strict=True))

    def points(role: str) -> np.ndarray:
        total = np.zeros_like(next(iter(shares.values())))
        for term, stake in conf["roles"][role]["stakes"].items():
            x = shares[term]
            total = total + stake["weight"] * (1 - x if stake["prefers"] == "low" else x)
        return total.ravel()

    return points("buyer"), points("seller")


def test_kalai_smorodinsky_and_kalai_on_the_tickets_frontier_are_65_65():
    s = frontier.space(tickets().config)
    assert s.ks_rational == s.ks_outcomes == (65, 65) and s.kalai == (65, 65) and s.nash == (65, 65)
    assert all(isinstance(v, Fraction) for v in (*s.ks_rational, *s.ks_outcomes, *s.kalai))
    # independent: brute force over a grid of deals, rational ones only (both at or above no agreement, 20)
    ub, us = grid_deals()
    rational = (ub >= 20 - 1e-9) & (us >= 20 - 1e-9)  # grid floats: 50 * (1 - 0.6) is not 20
    ub, us = ub[rational], us[rational]
    ideal = (ub.max(), us.max())
    assert ideal == pytest.approx((92, 92))
    ks = np.minimum((ub - 20) / (ideal[0] - 20), (us - 20) / (ideal[1] - 20)).argmax()
    egalitarian = np.minimum(ub - 20, us - 20).argmax()
    assert (ub[ks], us[ks]) == pytest.approx((65, 65))
    assert (ub[egalitarian], us[egalitarian]) == pytest.approx((65, 65))


def test_the_points_move_apart_when_the_fallbacks_differ():
    """A lopsided no-agreement point separates the three solutions, each still matching its definition."""
    conf = game_config("tickets")
    conf["roles"]["buyer"]["no_agreement"] = 40
    s = frontier.space(load_game(conf).config)
    ub, us = grid_deals()
    rational = (ub >= 40 - 1e-9) & (us >= 20 - 1e-9)
    ub, us = ub[rational], us[rational]
    ideal = (ub.max(), us.max())
    ks = np.minimum((ub - 40) / (ideal[0] - 40), (us - 20) / (ideal[1] - 20)).argmax()
    egalitarian = np.minimum(ub - 40, us - 20).argmax()
    step = math.hypot(100, 100) / 40  # one grid step at most, in utility points
    assert math.dist(s.ks_rational, (ub[ks], us[ks])) < step
    assert math.dist(s.kalai, (ub[egalitarian], us[egalitarian])) < step
    # by hand, on the x + y = 130 segment: equal gains over (40, 20) give (75, 55); the ideal point is (92, 84)
    # (the seller's best deal leaving the buyer 40), so equal shares solve (x - 40) / 52 = (y - 20) / 64
    assert ideal == pytest.approx((92, 84))
    assert s.kalai == (75, 55)
    share = Fraction(130 - 60, 52 + 64)
    assert s.ks_rational == (40 + 52 * share, 20 + 64 * share) == (Fraction(2070, 29), Fraction(1700, 29))
    assert s.nash == s.kalai != s.ks_rational  # on a 45-degree segment Nash also splits gains equally
    # over all outcomes the ideal is (100, 100) (each role's best deal, rational or not): equal shares of (60, 80)
    # on x + y = 130 solve (x - 40) / 60 = (y - 20) / 80, so (70, 60), as negmas computes it
    assert s.ks_outcomes == (70, 60) != s.ks_rational


def test_seed001_deal_optimalities_are_negmas_definitions():
    record = replay_transcript(ReplayFile.model_validate_json((DATA / "seed001_replay.json").read_text()))
    game = tickets()
    figures = game.game_metrics(record)
    buyer, seller = Fraction(2531, 40), Fraction(1267, 20)  # seed 001's recorded utilities
    assert (figures["utility_buyer"], figures["utility_seller"]) == (float(buyer), float(seller))
    diagonal = math.hypot(100 - 0, 100 - 0)  # each role's utility ranges over [0, 100]
    to_65 = math.hypot(65 - float(buyer), 65 - float(seller))
    for name in ("nash", "ks_rational", "ks_outcomes", "kalai"):
        assert figures[f"dist_{name}"] == pytest.approx(to_65, rel=1e-15)
        assert figures[f"{name}_optimality"] == pytest.approx(1 - to_65 / diagonal, rel=1e-15)
    # negmas: welfare of the deal over the best welfare on the frontier (130 on x + y = 130)
    assert figures["max_welfare_optimality"] == float((buyer + seller) / 130) == float(Fraction(1013, 1040))
    assert figures["dist_max_welfare"] == pytest.approx((130 - float(buyer + seller)) / math.sqrt(2))
    # every optimality the game reports is described for the card
    described = game.metric_fields()
    assert {k for k in figures if k.endswith("_optimality")} == {
        "pareto_optimality", "pareto_rational_optimality", "nash_optimality", "ks_rational_optimality",
        "ks_outcomes_optimality", "kalai_optimality", "max_welfare_optimality"}
    assert all(k in described for k in figures if k.endswith("_optimality") or k.startswith("dist_"))


def test_the_two_ks_points_give_a_deal_different_optimalities_with_unequal_fallbacks():
    """With no-agreement points (40, 20) the two points are 1.95 utility points apart: seed 001's deal's optimality
    differs by 0.0132 between them (at most 0.0138 for any deal: their distance over the diagonal)."""
    conf = game_config("tickets")
    conf["roles"]["buyer"]["no_agreement"] = 40
    s = frontier.space(load_game(conf).config)
    deal = (Fraction(2531, 40), Fraction(1267, 20))
    figures = frontier.distances(s, deal)
    diagonal = math.hypot(100, 100)
    rational = math.dist(deal, (Fraction(2070, 29), Fraction(1700, 29)))
    outcomes = math.dist(deal, (70, 60))
    assert figures["dist_ks_rational"] == pytest.approx(rational, rel=1e-15)
    assert figures["dist_ks_outcomes"] == pytest.approx(outcomes, rel=1e-15)
    assert figures["ks_rational_optimality"] == pytest.approx(1 - rational / diagonal, rel=1e-15)
    gap = figures["ks_outcomes_optimality"] - figures["ks_rational_optimality"]
    apart = math.dist((Fraction(2070, 29), Fraction(1700, 29)), (70, 60))
    assert gap == pytest.approx((rational - outcomes) / diagonal) and 0.013 < gap <= apart / diagonal < 0.014


def negmas_ufuns(config, levels: dict):
    """negmas' linear additive utility functions of the tickets roles on a grid of term values (``levels``), with
    each role's no-agreement points as its reserved value."""
    negmas = pytest.importorskip("negmas")
    from negmas.preferences import LinearAdditiveUtilityFunction as Linear

    issues = [negmas.make_issue([float(v) for v in levels[t.name]], name=t.name) for t in config.terms]

    def ufun(role: str) -> Linear:
        r = config.roles[role]
        values, weights = {}, {}
        for t in config.terms:
            stake = r.stakes[t.name]
            lo, hi = t.min, t.max
            values[t.name] = {float(v): (1 - (v - lo) / (hi - lo)) if stake.prefers == "low" else (v - lo) / (hi - lo)
                              for v in levels[t.name]}
            weights[t.name] = stake.weight
        return Linear(values=values, weights=weights, issues=issues, reserved_value=r.no_agreement)

    return [ufun("buyer"), ufun("seller")], issues


@pytest.mark.parametrize("buyer_fallback", [20, 40])
def test_ks_outcomes_is_negmas_ks_point(buyer_fallback):
    """negmas' ks_points (ideal over all outcomes, reserved values subtracted) on a grid of tickets deals that holds
    the exact point finds ours."""
    from negmas.preferences.ops import ks_points, pareto_frontier

    conf = game_config("tickets")
    conf["roles"]["buyer"]["no_agreement"] = buyer_fallback
    config = load_game(conf).config
    levels = {"unit_price_usd": [60, 100], "name_change_notice_hours": [0, 96],
              "cancellation_fee_pct": [Fraction(25, 3) * k for k in range(13)]}  # r = fee / 25 in steps of 1/3
    ufuns, issues = negmas_ufuns(config, levels)
    front, _ = pareto_frontier(ufuns, issues=issues)
    found = ks_points(ufuns, front, issues=issues)
    ours = frontier.space(config).ks_outcomes
    assert found and all(p == pytest.approx((float(ours[0]), float(ours[1])), abs=1e-9) for p, _ in found)


def test_the_two_pareto_variants_differ_below_a_fallback_and_the_rational_one_is_negmas():
    """With the seller's no-agreement points at 45, the buyer's best deal (100, 0) lies on the frontier (ours:
    1.000) but 48.5 utility points from its part both sides prefer to no deal, the only part negmas keeps (0.657)."""
    from negmas.preferences.ops import (
        calc_outcome_distances,
        calc_outcome_optimality,
        calc_scenario_stats,
        estimate_max_dist,
    )

    conf = game_config("tickets")
    conf["roles"]["seller"]["no_agreement"] = 45
    config = load_game(conf).config
    deal = (Fraction(100), Fraction(0))  # price 60, no fee, no notice
    figures = frontier.distances(frontier.space(config), deal)
    assert figures["pareto_optimal"] and figures["pareto_optimality"] == 1.0
    assert figures["dist_pareto_rational"] == pytest.approx(math.hypot(100 - 82, 45 - 0), rel=1e-15)
    assert figures["pareto_rational_optimality"] == pytest.approx(1 - math.hypot(18, 45) / math.hypot(100, 100))
    levels = {"unit_price_usd": [60, 100], "cancellation_fee_pct": [Fraction(25, 3) * k for k in range(13)],
              "name_change_notice_hours": [Fraction(96, 10) * k for k in range(11)]}  # holds (82, 45): 86.4 hours
    ufuns, _ = negmas_ufuns(config, levels)
    stats = calc_scenario_stats(ufuns)
    theirs = calc_outcome_optimality(calc_outcome_distances(tuple(map(float, deal)), stats), stats,
                                     estimate_max_dist(ufuns))
    assert theirs.pareto_optimality == pytest.approx(figures["pareto_rational_optimality"], abs=1e-9)
    assert theirs.pareto_optimality < figures["pareto_optimality"] - 0.3
