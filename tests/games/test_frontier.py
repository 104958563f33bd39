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
from bargain_ray.play.rescore import ReplayFile, rescore


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
    assert s.kalai_smorodinsky == (65, 65) and s.kalai == (65, 65) and s.nash == (65, 65)
    assert all(isinstance(v, Fraction) for v in (*s.kalai_smorodinsky, *s.kalai))
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
    assert math.dist(s.kalai_smorodinsky, (ub[ks], us[ks])) < step
    assert math.dist(s.kalai, (ub[egalitarian], us[egalitarian])) < step
    # by hand, on the x + y = 130 segment: equal gains over (40, 20) give (75, 55); the ideal point is (92, 84)
    # (the seller's best deal leaving the buyer 40), so equal shares solve (x - 40) / 52 = (y - 20) / 64
    assert ideal == pytest.approx((92, 84))
    assert s.kalai == (75, 55)
    share = Fraction(130 - 60, 52 + 64)
    assert s.kalai_smorodinsky == (40 + 52 * share, 20 + 64 * share) == (Fraction(2070, 29), Fraction(1700, 29))
    assert s.nash == s.kalai != s.kalai_smorodinsky  # on a 45-degree segment Nash also splits gains equally


def test_seed001_deal_optimalities_are_negmas_definitions():
    record = rescore(ReplayFile.model_validate_json((DATA / "seed001_replay.json").read_text()))
    game = tickets()
    figures = game.game_metrics(record)
    buyer, seller = Fraction(2531, 40), Fraction(1267, 20)  # seed 001's recorded utilities
    assert (figures["utility_buyer"], figures["utility_seller"]) == (float(buyer), float(seller))
    diagonal = math.hypot(100 - 0, 100 - 0)  # each role's utility ranges over [0, 100]
    to_65 = math.hypot(65 - float(buyer), 65 - float(seller))
    for name in ("nash", "ks", "kalai"):
        assert figures[f"dist_{name}"] == pytest.approx(to_65, rel=1e-15)
        assert figures[f"{name}_optimality"] == pytest.approx(1 - to_65 / diagonal, rel=1e-15)
    # negmas: welfare of the deal over the best welfare on the frontier (130 on x + y = 130)
    assert figures["max_welfare_optimality"] == float((buyer + seller) / 130) == float(Fraction(1013, 1040))
    assert figures["dist_max_welfare"] == pytest.approx((130 - float(buyer + seller)) / math.sqrt(2))
    # every optimality the game reports is described for the card
    described = game.metric_fields()
    assert {k for k in figures if k.endswith("_optimality")} == {
        "pareto_optimality", "nash_optimality", "ks_optimality", "kalai_optimality", "max_welfare_optimality"}
    assert all(k in described for k in figures if k.endswith("_optimality") or k.startswith("dist_"))
