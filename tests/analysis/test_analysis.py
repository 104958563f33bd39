"""Analysis: per-game metrics against figures computed here independently, the exact
agreement space against a brute-force grid, intervals against statsmodels, operational counts.

``make_sweep`` builds a real sweep folder (real game loop, real store, real parquet) from
scripted replies: deals of known terms, a no-deal, an invalid reply then a repair, a format
failure and a technical failure. The report and export tests use it too.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections import deque
from dataclasses import replace
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
import statsmodels.api as sm
from helpers import game_config, recording_git

from bargain_ray.analysis.build import analyse
from bargain_ray.analysis.card import sweep_commit
from bargain_ray.analysis.intervals import MIN_SEEDS
from bargain_ray.analysis.seeds import by_cell, paired
from bargain_ray.analysis.sweep import read_sweep
from bargain_ray.config import GridConfig, ModelConfig
from bargain_ray.core.errors import Failure, FailureKind, TechnicalFailure
from bargain_ray.core.records import GameRecord, Reply, Usage
from bargain_ray.core.unit import Unit
from bargain_ray.games import load_game
from bargain_ray.games.multi_issue import frontier
from bargain_ray.play.loop import play
from bargain_ray.store import GameJournal, open_manifest, write_tables
from bargain_ray.store.manifest import Determinants, Manifest

TICKETS = game_config("tickets")
MODELS = {"X": ("anthropic", "model-x", "model-x-2026-01-01"), "Y": ("openai", "model-y", "model-y-0613")}


class ScriptedAgent:
    """Replies in call order from a queue shared by both roles, as a provider would report them."""

    def __init__(self, letter: str, queue: deque) -> None:
        self.provider, self.model, self.version = MODELS[letter]
        self.queue = queue

    async def act(self, prompt, call_id: str) -> Reply:
        text = self.queue.popleft()
        reply = Reply(
            text="" if text is None else text, provider=self.provider, model=self.model, model_version=self.version,
            request={"system": prompt.system, "messages": [m.model_dump() for m in prompt.messages]},
            usage=Usage(input_tokens=100, output_tokens=10), latency_s=0.5 + len(self.queue) / 10, cost_usd=0.001,
        )
        if text is None:
            raise TechnicalFailure(Failure(kind=FailureKind.SERVER_ERROR, detail="HTTP 529 overloaded after 6 attempts"),
                                   reply=reply)
        return reply


def offer(p: float, r: float, t: float, msg: str = "Our offer.") -> str:
    return json.dumps({"action": "OFFER", "offer_id": None,
                       "terms": {"unit_price_usd": p, "cancellation_fee_pct": r, "name_change_notice_hours": t},
                       "message": msg})


def accept(offer_id: str) -> str:
    return json.dumps({"action": "ACCEPT", "offer_id": offer_id, "terms": None, "message": "Agreed."})


NONE = json.dumps({"action": "NONE", "offer_id": None, "terms": None, "message": "We pass."})


def deal_script(terms: tuple[float, float, float], rounds: int) -> list[str]:
    """Opening offers, then ``terms`` offered on turn rounds-1 and accepted on turn ``rounds``."""
    opening = [offer(95, 90, 96) if i % 2 == 0 else offer(62, 10, 12) for i in range(rounds - 2)]
    return [*opening, offer(*terms), accept(f"O{rounds - 1}")]


# (seed, pairing, first speaker) -> script. Two seeds x two pairings x two first speakers.
DEALS = {
    (1, "XY", "seller"): ((64.5, 37, 96), 9),  # the deal of seed 001
    (1, "XY", "buyer"): ((60, 50, 96), 4),  # on the frontier, at the Nash point
    (1, "YX", "seller"): ((80, 50, 48), 6),
    (1, "YX", "buyer"): ((70, 20, 60), 3),
    (2, "XY", "seller"): ((66, 40, 90), 8),
    (2, "XY", "buyer"): ((75, 75, 24), 5),
    (2, "YX", "seller"): None,  # no deal: twelve turns of NONE
    (2, "YX", "buyer"): ((65, 45, 80), 7),
}
EXTRA = {
    (3, "XY", "seller"): ["not json", offer(70, 30, 72), accept("O1")],  # one repair, then a deal
    (3, "XY", "buyer"): ["nope", "still nope", "{\"action\": \"MAYBE\"}"],  # format failure
    (3, "YX", "seller"): [offer(90, 80, 96), None],  # technical failure on turn 2
    (3, "YX", "buyer"): [offer(61, 5, 10), offer(85, 60, 96), accept("O2")],
}


def scripts() -> dict[tuple[int, str, str], list[str | None]]:
    out: dict[tuple[int, str, str], list[str | None]] = {}
    for key, spec in DEALS.items():
        out[key] = [NONE] * 12 if spec is None else deal_script(*spec)
    return out | EXTRA


def unit(seed: int, pairing: str, first: str, position: int) -> Unit:
    roles = {"buyer": pairing[0], "seller": pairing[1]}
    return Unit(**{
        "unit_id": f"negotiation-test-20261129-b{seed:02d}-p{position:02d}-{pairing.lower()}-a1-f{first}",
        "experiment": "test", "game": "tickets", "family": "multi_issue", "block": seed, "position": position,
        "phase": "main", "condition": "C3", "pairing": pairing, "assignment": 1,
        "cell": f"C3|{pairing}|a1|{first}", "seed": seed, "first_speaker": first,
        "models_by_role": {r: MODELS[x][1] for r, x in roles.items()}, "letter_of_role": roles,
        "agent_of_role": {"buyer": "A", "seller": "B"}, "hash": f"h{seed}{pairing}{first}",
    })


def make_sweep(path: Path) -> Path:
    """A real sweep folder of the scripted games above."""
    components = {"game tickets under condition C3": {"config": TICKETS, "prompts": "f2cb6b083cd2fa8e"}}
    components |= {f"model {k} ({v[1]})": {"name": v[1], "provider": v[0]} for k, v in MODELS.items()}
    design = {"game": "tickets", "conditions": ["C3"], "pairings": ["XY", "YX"], "first_speakers": ["seller", "buyer"],
              "assignments": [{"id": 1, "roles": {"buyer": "A", "seller": "B"}}]}
    config = Determinants(grid=GridConfig(name="test", experiment="test", designs=[design]), provider="default",
                          games={"tickets": TICKETS}, conditions={},
                          models={k: ModelConfig(name=v[1], provider=v[0]) for k, v in MODELS.items()})
    open_manifest(path, Manifest(grid="test", created="20261129", config=config, components=components))
    journal = GameJournal(path)
    game = load_game(TICKETS)
    for position, ((seed, pairing, first), replies) in enumerate(sorted(scripts().items()), start=1):
        queue = deque(replies)
        u = unit(seed, pairing, first, position)
        agents = {role: ScriptedAgent(u.letter_of_role[role], queue) for role in game.roles}
        record = asyncio.run(play(game, agents, u))
        journal.append_many([record])
    journal.close()
    write_tables(path)
    return path


@pytest.fixture(scope="module")
def analysis(tmp_path_factory):
    return analyse(read_sweep(make_sweep(tmp_path_factory.mktemp("sweep"))))


def points(p: float, r: float, t: float) -> tuple[Fraction, Fraction]:
    """Utilities as the seed 000 briefs state them, computed here from the brief's formula."""
    P, R, T = Fraction(str(p)) - 60, Fraction(str(r)), Fraction(str(t))
    p_, r_, t_ = P / 10, R / 25, T / 24
    buyer = 50 * (1 - p_ / 4) + 30 * (1 - r_ / 4) + 20 * (1 - t_ / 4)
    seller = 20 * (p_ / 4) + 30 * (r_ / 4) + 50 * (t_ / 4)
    return buyer, seller


def row_of(frame: pl.DataFrame, seed: int, pairing: str, first: str) -> dict[str, Any]:
    return frame.filter(
        (pl.col("seed") == seed) & (pl.col("pairing") == pairing) & (pl.col("first_speaker") == first)
    ).row(0, named=True)


def test_per_game_figures_equal_the_briefs_formula(analysis):
    g = analysis.per_game
    assert g.height == 12
    for (seed, pairing, first), spec in DEALS.items():
        row = row_of(g, seed, pairing, first)
        if spec is None:
            assert (row["status"], row["agreement"], row["rounds"]) == ("NO_AGREEMENT", False, 12)
            assert row["utility_buyer"] == 20 and row["joint_gain"] == 0 and row["efficiency"] is None
            assert row["efficiency_all_assigned"] == 0 and row["dist_pareto"] is None
            continue
        terms, rounds = spec
        buyer, seller = points(*terms)
        gains = buyer - 20, seller - 20
        assert row["status"] == "AGREEMENT" and row["rounds"] == row["rounds_to_agreement"] == rounds
        assert row["utility_buyer"] == pytest.approx(float(buyer)) and row["utility_seller"] == pytest.approx(float(seller))
        assert row["joint_gain"] == pytest.approx(float(sum(gains)))
        assert row["efficiency"] == pytest.approx(float(sum(gains) / 90))
        assert row["buyer_share_of_joint_gain"] == pytest.approx(float(gains[0] / sum(gains)))
        assert row["deal_unit_price_usd"] == terms[0]


def test_seed001_deal_has_the_hand_computed_distances(analysis):
    row = row_of(analysis.per_game, 1, "XY", "seller")
    assert row["efficiency"] == pytest.approx(77 / 80)
    # frontier segment x + y = 130 between (80, 50) and (50, 80); the deal's sum is 126.625
    assert row["dist_pareto"] == pytest.approx(3.375 / math.sqrt(2))
    assert row["dist_max_welfare"] == pytest.approx(3.375 / math.sqrt(2))
    assert row["dist_nash"] == pytest.approx(math.hypot(65 - 63.275, 65 - 63.35))  # Nash at (65, 65)
    assert row["pareto_optimality"] == pytest.approx(1 - 3.375 / math.sqrt(2) / math.hypot(100, 100))
    on = row_of(analysis.per_game, 1, "XY", "buyer")  # 60/50/96 is (65, 65)
    assert on["pareto_optimal"] and on["dist_pareto"] == 0 and on["dist_nash"] == 0


def test_other_statuses_are_counted_as_they_happened(analysis):
    g = analysis.per_game
    repaired = row_of(g, 3, "XY", "seller")
    assert (repaired["status"], repaired["total_retries"], repaired["invalid_attempts"], repaired["calls_attempted"]) == ("AGREEMENT", 1, 1, 3)
    failed = row_of(g, 3, "XY", "buyer")
    assert (failed["status"], failed["format_failure"], failed["agreement"], failed["invalid_attempts"]) == (
        "FORMAT_FAILURE", True, False, 3)
    tech = row_of(g, 3, "YX", "seller")
    assert (tech["status"], tech["known"], tech["technical_failure"], tech["agreement"]) == (
        "TECHNICAL_ERROR", False, True, None)


def test_exact_frontier_matches_a_brute_force_grid():
    s = frontier.space(load_game(TICKETS).config)
    assert s.frontier == ((100, 0), (80, 50), (50, 80), (0, 100))
    assert s.nash == (65, 65) and s.max_welfare == ((80, 50), (50, 80))
    # independent: every deal on a 41-point grid per term, non-dominated points by a sort
    grid = np.linspace(0, 1, 41)
    p, r, t = (a.ravel() for a in np.meshgrid(grid, grid, grid))
    ub, us = 50 * (1 - p) + 30 * (1 - r) + 20 * (1 - t), 20 * p + 30 * r + 50 * t
    order = np.lexsort((-us, -ub))
    best_us = np.maximum.accumulate(us[order])
    keep = order[us[order] >= best_us - 1e-9]
    fu, fs = ub[keep], us[keep]
    assert (fu + fs).max() == pytest.approx(130)
    product = (fu - 20) * (fs - 20)
    assert (fu[product.argmax()], fs[product.argmax()]) == pytest.approx((65, 65), abs=1.3)
    rng = np.random.default_rng(1)
    for _ in range(30):  # random deals: exact distance within one grid step of the grid's
        x = rng.random(3)
        b, s_ = 50 * (1 - x[0]) + 30 * (1 - x[1]) + 20 * (1 - x[2]), 20 * x[0] + 30 * x[1] + 50 * x[2]
        exact = frontier.distances(s, (Fraction(b), Fraction(s_)))["dist_pareto"]
        brute = np.hypot(fu - b, fs - s_).min()
        assert exact <= brute + 1e-9 and brute - exact < 1.3


def test_cells_average_within_seed_then_over_seeds(analysis):
    c = analysis.by_cell.filter(pl.col("metric") == "efficiency_all_assigned")
    cell = c.filter((pl.col("pairing") == "XY") & (pl.col("first_speaker") == "seller")).row(0, named=True)
    seeds = [float(sum(b - 20 for b in points(*DEALS[(1, "XY", "seller")][0])) / 90),
             float(sum(b - 20 for b in points(*DEALS[(2, "XY", "seller")][0])) / 90),
             float(sum(b - 20 for b in points(70, 30, 72)) / 90)]
    assert cell["n_seeds"] == 3 and cell["mean"] == pytest.approx(sum(seeds) / 3)
    assert cell["ci_low"] is None and cell["ci_high"] is None  # 3 seeds: fewer than an interval is shown for
    tech = c.filter((pl.col("pairing") == "YX") & (pl.col("first_speaker") == "seller")).row(0, named=True)
    assert tech["n_games"] == 2  # the technical failure is unknown and left out


def test_paired_differences_use_common_seeds(analysis):
    d = analysis.paired.filter((pl.col("metric") == "agreement") & (pl.col("factor") == "pairing")
                               & (pl.col("first_speaker") == "seller")).row(0, named=True)
    assert (d["a"], d["b"], d["n_seeds"]) == ("XY", "YX", 2)  # seed 3 of YX|seller is unknown
    assert d["mean_diff"] == pytest.approx(0.5)  # seed 1: 1 - 1, seed 2: 1 - 0


def test_a_cell_interval_is_the_seed_clustered_interval_statsmodels_gives():
    """Games of one seed share their draws: the cell's interval is the cluster-robust (CR1) t interval of a
    regression on a constant with the games clustered by seed, G - 1 degrees of freedom, whatever the games a seed."""
    rng = np.random.default_rng(2026)
    seeds = np.repeat(np.arange(12), [1, 2, 3] * 4)
    values = 0.3 + rng.normal(0, 1, 12)[seeds] + rng.normal(0, 1, seeds.size)
    frame = pl.DataFrame({"cell": "c", "seed": seeds, "x": values})
    row = by_cell(frame, ["cell"], ["x"]).row(0, named=True)
    means = frame.group_by("seed").agg(pl.col("x").mean())["x"].to_numpy()
    fit = sm.OLS(means, np.ones(12)).fit(cov_type="cluster", cov_kwds={"groups": np.arange(12)}, use_t=True)
    assert (row["mean"], row["ci_low"], row["ci_high"]) == pytest.approx((fit.params[0], *fit.conf_int()[0]))


def test_fewer_seeds_than_the_minimum_give_the_estimate_alone():
    frame = pl.DataFrame({"cell": "c", "seed": np.arange(MIN_SEEDS - 1), "x": np.arange(MIN_SEEDS - 1.0)})
    row = by_cell(frame, ["cell"], ["x"]).row(0, named=True)
    assert (row["mean"], row["ci_low"], row["ci_high"]) == ((MIN_SEEDS - 2) / 2, None, None)
    more = by_cell(frame.vstack(pl.DataFrame({"cell": "c", "seed": MIN_SEEDS, "x": 0.0})), ["cell"], ["x"])
    assert more["ci_low"][0] is not None
    one = pl.DataFrame({"cell": ["c", "c"], "seed": [1, 1], "x": [1.0, 2.0]})
    assert paired(one, ["cell"], ["x"]).height == 0


def test_a_sweep_is_read_back_typed(analysis):
    """The manifest and every record reach analysis as the models the driver wrote, never as dicts."""
    s = analysis.sweep
    assert type(s.manifest) is Manifest and s.manifest.game_conditions() == [("tickets", "C3")]
    records = list(s.records())
    assert len(records) == s.games.height and all(type(r) is GameRecord for r in records)
    first = next(s.records())
    assert s.game_config(first.unit) == TICKETS
    briefs = s.briefs(first)
    assert set(briefs) == {"buyer", "seller"} and all(sent for _, sent in briefs.values())
    assert briefs["buyer"][0] == next(c.request for c in first.calls if c.role == "buyer")["system"]


def test_operational_counts_per_model(analysis):
    op = {r["model"]: r for r in analysis.operational.iter_rows(named=True)}
    assert set(op) == {"model-x", "model-y"}
    calls = analysis.sweep.calls
    for model, row in op.items():
        mine = calls.filter(pl.col("model") == model)
        assert row["calls"] == mine.height and row["input_tokens"] == 100 * mine.height
        assert row["latency_p50_s"] == pytest.approx(float(np.quantile(mine["latency_s"].to_numpy(), 0.5)))
    x, y = op["model-x"], op["model-y"]
    # seed 3, XY: the seller (Y) repairs once; the buyer (X) breaks the format three times and fails
    assert (x["invalid_attempts"], y["invalid_attempts"], x["repairs"], y["repairs"]) == (3, 1, 2, 1)
    assert (x["invalid_rule_not_one_json_object"], x["invalid_rule_missing_key"]) == (2, 1)
    assert (y["invalid_rule_not_one_json_object"], y["invalid_rule_missing_key"]) == (1, 0)
    assert (x["format_failures"], y["format_failures"]) == (1, 0)
    # seed 3, YX, seller opens: the buyer's (Y) call fails; both models played in that game
    assert (x["technical_failures"], y["technical_failures"]) == (0, 1)
    assert x["games_technical_error"] == y["games_technical_error"] == 1
    assert x["reported_models"] == "model-x-2026-01-01"


def test_the_card_asks_git_without_the_key_variables_the_manifest_names(analysis, tmp_path, monkeypatch):
    """The export's provenance runs git, a child that calls no provider: the key variable each model of the
    typed manifest reads (``api_key_env``, named like no key) is left out of git's environment."""
    s = analysis.sweep
    models = {k: m.model_copy(update={"api_key_env": "MY_TEAM_TOKEN"}) for k, m in s.manifest.config.models.items()}
    config = s.manifest.config.model_copy(update={"models": models})
    manifest = s.manifest.model_copy(update={"git_commit": None, "config": config})
    dump = recording_git(tmp_path, monkeypatch)
    monkeypatch.setenv("MY_TEAM_TOKEN", "team-secret-4711")
    assert sweep_commit(replace(analysis, sweep=replace(s, manifest=manifest))) == "0123abc"
    seen = dump.read_text()
    assert "team-secret-4711" not in seen and "PATH=" in seen
