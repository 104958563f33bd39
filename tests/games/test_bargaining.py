"""The price bargaining family (seed 002): rules, privacy, common random numbers, metrics, replay, sweep."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
from collections import deque
from fractions import Fraction
from pathlib import Path

import polars as pl
import pytest

from bargain_ray.__main__ import main
from bargain_ray.agents.replay import ReplayAgent
from bargain_ray.config import compose_dict
from bargain_ray.core.figures import Figure
from bargain_ray.core.records import GameRecord, Reply
from bargain_ray.core.unit import Unit
from bargain_ray.design import load_config, units
from bargain_ray.games import load_game
from bargain_ray.games.bargaining import engine, metrics, prompts, strategy
from bargain_ray.games.base import RuleError
from bargain_ray.play.loop import play
from bargain_ray.play.rescore import ReplayFile, replay_transcript
from bargain_ray.store.journal import read_records

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"


def make_game(**overrides):
    return load_game(compose_dict("game/bargaining")["game"] | overrides)


def reply(action="offer", offer=50, claim=None, message="hi", reasoning="mine", **extra) -> str:
    obj = {"stated_valuation": claim, "offer": offer, "action": action, "message": message,
           "reasoning_private": reasoning}
    return json.dumps(obj | extra)


def played(game, *texts):
    """The state after the given replies, each legal, in turn order."""
    state = game.start(1001, None)
    for text in texts:
        role = game.to_move(state)
        state = game.apply(state, role, game.parse(state, role, text))
    return state


# --- rules -----------------------------------------------------------------------------------------

def test_valuations_are_seeded_integers_and_seller_moves_first():
    game = make_game()
    a, b = game.start(1001, None), game.start(1001, None)
    assert (a.seller_cost, a.buyer_value) == (b.seller_cost, b.buyer_value) == (7, 97)
    draws = {(s.seller_cost, s.buyer_value) for s in (game.start(seed, None) for seed in range(200))}
    assert len(draws) > 150
    assert all(0 <= c <= 100 and 0 <= v <= 100 for c, v in draws)
    assert game.to_move(a) == "seller"
    assert game.to_move(played(game, reply(offer=80))) == "buyer"


RULES = [
    # (replies before, reply, rule, exact error text the model sees)
    ((), "Sure! 80", "not_one_json_object", "Your reply must be exactly one JSON object and nothing else."),
    ((), "[1, 2]", "not_one_json_object", "Your reply must be exactly one JSON object and nothing else."),
    ((), json.dumps({"offer": 80, "action": "offer", "message": "", "reasoning_private": ""}),
     "missing_key", "The JSON object must have the key 'stated_valuation'."),
    ((), reply(offer=80, price=80), "unknown_key",
     "Unknown key 'price': the keys are stated_valuation, offer, action, message, reasoning_private."),
    ((), reply(action="counter"), "unknown_action", "Unknown action 'counter': use \"offer\", \"accept\" or \"reject\"."),
    ((), reply(claim="ten"), "stated_valuation_not_number", '"stated_valuation" must be a number or null.'),
    ((), reply(claim=True), "stated_valuation_not_number", '"stated_valuation" must be a number or null.'),
    ((), reply(message=7), "message_not_text", '"message" must be a string.'),
    ((), reply(message="x" * 301), "message_too_long", '"message" has 301 characters; it must be at most 300.'),
    ((), reply(reasoning=None), "reasoning_not_text", '"reasoning_private" must be a string.'),
    ((), reply(offer=None), "offer_missing", 'For action "offer", "offer" must be your price (a number).'),
    ((), reply(offer="80"), "offer_not_number", '"offer" must be a number or null.'),
    ((), reply(offer=80.125), "offer_too_many_decimals", '"offer" is 80.125: use at most 2 decimal places.'),
    ((), reply(offer=101), "offer_out_of_range", '"offer" is 101: a price must be from 0 to 100.'),
    ((), reply(offer=-1), "offer_out_of_range", '"offer" is -1: a price must be from 0 to 100.'),
    ((), reply(action="accept", offer=None), "first_round_offer", 'Round 1 must be an offer; "accept" is not allowed yet.'),
    ((), reply(action="reject", offer=None), "first_round_offer", 'Round 1 must be an offer; "reject" is not allowed yet.'),
    ((reply(offer=80),), reply(action="reject", offer="x"), "offer_not_number", '"offer" must be a number or null.'),
    ((reply(offer=80), reply(action="reject", offer=None)), reply(action="accept", offer=None), "no_standing_offer",
     'There is no standing offer from the buyer to accept: make an offer instead.'),
    ((reply(offer=80), reply(action="reject", offer=None)), reply(action="reject", offer=None), "no_standing_offer",
     'There is no standing offer from the buyer to reject: make an offer instead.'),
]


@pytest.mark.parametrize(("before", "text", "rule", "error"), RULES, ids=[r[2] for r in RULES])
def test_every_rule_names_itself_and_tells_the_model_why(before, text, rule, error):
    game = make_game()
    state = played(game, *before)
    with pytest.raises(RuleError) as info:
        game.parse(state, game.to_move(state), text)
    assert info.value.rule == rule
    assert str(info.value) == error
    repair = game.repair_message(state, game.to_move(state), info.value)
    assert repair.startswith(f"Your reply was not accepted: {error} Nothing was recorded")


def test_a_code_fenced_object_and_exact_prices_are_accepted():
    game = make_game()
    state = game.start(1, None)
    parsed = game.parse(state, "seller", "```json\n" + reply(offer=80.25, claim=61.5) + "\n```")
    assert (str(parsed.offer), str(parsed.stated_valuation)) == ("80.25", "61.5")


def test_offer_accept_reject_semantics():
    game = make_game()
    state = played(game, reply(offer=80))
    assert state.standing.price == 80 and state.standing.proposer == "seller"
    state = played(game, reply(offer=80), reply(offer=40))
    assert state.standing.price == 40 and state.standing.proposer == "buyer"
    # reject withdraws without countering, even with an "offer" alongside (seed 002's quirk: shown, never standing)
    state = played(game, reply(offer=80), reply(action="reject", offer=50))
    assert state.standing is None and game.to_move(state) == "seller" and state.ended is None
    assert engine.public(game.config, state.record[-1]).offer == 50
    # accept closes at the counterparty's standing offer, whatever "offer" says
    state = played(game, reply(offer=80), reply(offer=40), reply(action="accept", offer=99))
    assert state.ended.status == "AGREEMENT" and state.deal.price == 40 and state.deal_round == 3
    out = game.outcome(state)
    assert out.price == Figure(exact="40", value=40)
    assert out.seller_payoff.exact == "11913/400"  # (40 - 7) x 0.95^2 = 33 x 361/400
    assert out.buyer_payoff.exact == "20577/400"  # (97 - 40) x 361/400
    assert game.to_move(state) is None


def test_the_round_limit_ends_without_agreement_and_pays_nothing():
    game = make_game(max_rounds=3)
    state = played(game, reply(offer=80), reply(offer=40), reply(offer=70))
    assert state.ended.status == "NO_AGREEMENT" and state.ended.reason == "round_limit"
    out = game.outcome(state)
    assert out.price is None and out.joint_payoff == Figure(exact="0", value=0)
    assert "This is round 3 of 3; this is the last round." in game.prompt(played(game, reply(offer=80), reply(offer=40)), "seller").messages[0].content


async def _scripted(game, replies, seed=1001):
    unit = Unit.for_replay("bargaining", "bargaining", seed, unit_id="u")
    return await play(game, dict.fromkeys(game.roles, ReplayAgent(deque(replies))), unit)


def test_two_retries_with_the_error_then_format_failure():
    game = make_game()
    bad = reply(action="counter")
    record = asyncio.run(_scripted(game, [reply(offer=80), bad, bad, bad]))
    out = record.outcome
    assert out.status == "FORMAT_FAILURE" and out.scored.failed_role == "buyer" and out.known
    assert out.scored.joint_payoff.exact == "0" and out.calls_attempted == 4 and out.repairs_used == 2
    last = record.calls[-1].request["messages"]
    assert [m["role"] for m in last] == ["user", "assistant", "user", "assistant", "user"]
    assert last[-1]["content"].startswith("Your reply was not accepted: Unknown action 'counter'")
    assert metrics.per_game(game.config, record)["deal_rate"] == 0.0


def test_reasoning_private_never_reaches_the_other_side():
    game = make_game()
    replies = [
        reply(offer=90, claim=60, reasoning="SELLER-SECRET-1"),
        reply(action="counter", reasoning="BUYER-SECRET-0"),
        reply(offer=40, claim=50, reasoning="BUYER-SECRET-1"),
        reply(action="reject", offer=50, reasoning="SELLER-SECRET-2"),
        reply(offer=45, reasoning="BUYER-SECRET-2"),
        reply(action="accept", offer=None, reasoning="SELLER-SECRET-3"),
    ]
    record = asyncio.run(_scripted(game, replies))
    assert record.outcome.status == "AGREEMENT"
    for call in record.calls:
        seen = json.dumps(call.request)
        theirs = "BUYER-SECRET" if call.role == "seller" else "SELLER-SECRET"
        assert theirs not in seen
        hidden = str(getattr(record.outcome.scored, "buyer_value" if call.role == "seller" else "seller_cost"))  # 97 or 7
        assert hidden not in re.findall(r"\d+(?:\.\d+)?", call.request["system"])
    seller_view = record.calls[-1].request["messages"][0]["content"]
    assert 'Round 3, Seller: reject (its "offer" field: 50); stated valuation: none; message: "hi"' in seller_view
    fields = record.turns[-1].fields.model_dump(mode="json")
    assert fields["reasoning_private"] == "SELLER-SECRET-3" and "reasoning_private" not in fields["public"]
    assert fields | {"public": None} == {
        "round": 5, "role": "seller", "action": "accept", "offer": None, "stated_valuation": None,
        "actual_valuation": 7, "standing_offer_before": 45, "accepted_price": 45, "message": "hi",
        "reasoning_private": "SELLER-SECRET-3", "public": None,
    }


def test_prompt_variants_differ_by_exactly_the_objective_sentence():
    default, explicit = make_game(), make_game(prompt_variant="explicit_objective")
    state = default.start(5, None)
    a, b = default.prompt(state, "buyer").system, explicit.prompt(state, "buyer").system
    assert prompts.OBJECTIVE == "Your objective is to maximize your own discounted payoff."
    assert prompts.OBJECTIVE not in a and b.count(prompts.OBJECTIVE) == 1
    assert b.replace("\n\n" + prompts.OBJECTIVE, "") == a


# --- design: the 8-cell grid -------------------------------------------------------------------------

def test_eight_cells_share_thirty_seeds_and_their_valuations():
    sweep = load_config("bargaining_8cells")
    plan = list(units(sweep, "20260101"))
    assert len(plan) == 240
    assert {m.api_key_env for m in sweep.models.values()} == {"OPENROUTER_API_KEY"}
    draws: dict[int, set] = {}
    cells_by_block: dict[int, set] = {}
    for u in plan:
        assert u.first_speaker == "seller"
        letters = dict(zip(("seller", "buyer"), u.pairing, strict=True))
        assert u.letter_of_role == letters
        game = sweep.game(u.game, u.condition)
        assert game.config.prompt_variant == u.condition
        s = game.start(u.seed, u.first_speaker)
        draws.setdefault(u.seed, set()).add((s.seller_cost, s.buyer_value))
        cells_by_block.setdefault(u.block, set()).add((u.condition, u.pairing, u.seed))
    assert sorted(draws) == list(range(1000, 1030))
    assert all(len(d) == 1 for d in draws.values())  # common random numbers
    assert all(len(c) == 8 and len({seed for *_, seed in c}) == 1 for c in cells_by_block.values())
    assert sum(v < c for (c, v), in draws.values()) == 14  # as seed 002's card reports for its 30 draws


# --- metrics on hand-made records ----------------------------------------------------------------------

def fig(exact: str) -> dict:
    return {"exact": exact, "value": float(Fraction(exact))}


def turn(rnd, role, action, offer=None, claim=None, accepted=None, message=""):
    public = {"round": rnd, "role": role, "action": action, "offer": offer, "stated_valuation": claim,
              "message": message}
    return {"unit_id": "g", "turn": rnd, "role": role, "call_ids": [], "attempts": 1, "valid": True,
            "fields": public | {"actual_valuation": 0, "standing_offer_before": None, "accepted_price": accepted,
                                "reasoning_private": "", "public": public}}


CONFIG = make_game().config


def record(status, cost=None, value=None, price=None, rnd=None, discount=None, seller="0", buyer="0", turns=()):
    """A typed game record as the journal reads one back, with only the fields the metrics read."""
    known = status != "TECHNICAL_ERROR"
    out = {"status": status, "known": known, "calls_attempted": 0, "repairs_used": 0, "reason": "",
           "agreement": status == "AGREEMENT", "technical_pass": known and status != "FORMAT_FAILURE"}
    if known:
        joint = str(Fraction(seller) + Fraction(buyer))
        out |= {"seller_cost": cost, "buyer_value": value, "available_surplus": value - cost,
                "prompt_variant": "default", "rounds_played": len(turns), "failed_role": None,
                "price": price and fig(price), "round": rnd, "discount": discount and fig(discount),
                "proposer": price and "seller", "seller_payoff": fig(seller), "buyer_payoff": fig(buyer),
                "joint_payoff": fig(joint)}
    unit = Unit.for_replay("bargaining", "bargaining", 1, unit_id="g")
    return GameRecord.model_validate({"unit": unit, "outcome": out, "turns": list(turns), "calls": []})


DEAL = record(
    "AGREEMENT", cost=20, value=80, price="50", rnd=3, discount="361/400", seller="2166/80", buyer="2166/80",
    turns=[
        turn(1, "seller", "offer", offer=70, claim=40, message="My cost is 40, so 70 is fair."),
        turn(2, "buyer", "offer", offer=50, claim=60, message="80 is out of the question for me."),
        turn(3, "seller", "accept", claim=55, accepted=50, message="Fine, 50."),
    ],
)


def test_per_game_metrics_of_a_deal_with_gains():
    m = metrics.per_game(CONFIG, DEAL)
    assert m["deal_rate"] == 1.0
    assert m["sigma_b"] == pytest.approx(0.5)  # (80 - 50) / (80 - 20)
    assert m["efficiency"] == pytest.approx(0.9025)  # 0.95^2
    assert m["rounds_to_deal"] == 3
    assert m["sensitivity"] == 1.0 and m["false_positive_rate"] is None
    assert m["ir_violation_rate"] == 0.0
    assert m["joint_payoff"] == pytest.approx(54.15)  # 60 x 0.9025
    assert (m["seller_cost"], m["buyer_value"], m["available_surplus"], m["price"]) == (20, 80, 60, 50.0)


def test_per_game_metrics_without_gains_format_failure_and_technical_error():
    bad = metrics.per_game(CONFIG, record("AGREEMENT", cost=70, value=40, price="60", rnd=2, discount="19/20",
                                  seller="-19/2", buyer="-19"))
    assert (bad["deal_rate"], bad["sigma_b"], bad["sensitivity"], bad["false_positive_rate"]) == (1.0, None, None, 1.0)
    assert bad["ir_violation_rate"] == 1.0 and bad["efficiency"] == pytest.approx(0.95)
    assert bad["joint_payoff"] == pytest.approx(-28.5)  # (40 - 70) x 0.95
    narrow = metrics.per_game(CONFIG, record("AGREEMENT", cost=50, value=51, price="50.5", rnd=1, discount="1",
                                     seller="1/2", buyer="1/2"))
    assert narrow["sigma_b"] is None and narrow["ir_violation_rate"] == 0.0  # v_b - v_s = 1 is not > 1
    fail = metrics.per_game(CONFIG, record("FORMAT_FAILURE", cost=30, value=60))
    assert (fail["deal_rate"], fail["sensitivity"], fail["joint_payoff"]) == (0.0, 0.0, 0.0)
    assert fail["efficiency"] is fail["rounds_to_deal"] is fail["ir_violation_rate"] is None
    none = metrics.per_game(CONFIG, record("TECHNICAL_ERROR"))
    assert all(none[k] is None for k in metrics.GAME_METRICS)
    assert metrics.per_turn(CONFIG, record("TECHNICAL_ERROR")) == []


def test_per_turn_and_role_metrics():
    rows = metrics.per_turn(CONFIG, DEAL)
    pick = [{k: r[k] for k in ("self_serving_bias", "disclosure", "truthful", "claim_violation", "msg_leakage")}
            for r in rows]
    assert pick == [
        # seller claims 40 (true 20) offering 70: bias +20, consistent, no leak
        {"self_serving_bias": 20.0, "disclosure": 1.0, "truthful": 0.0, "claim_violation": 0.0, "msg_leakage": 0.0},
        # buyer claims 60 (true 80) offering 50: bias -(60 - 80) = 20; "80" in the message leaks the value
        {"self_serving_bias": 20.0, "disclosure": 1.0, "truthful": 0.0, "claim_violation": 0.0, "msg_leakage": 1.0},
        # seller claims 55 but accepts 50: +1 x (50 - 55) < 0 is a violation
        {"self_serving_bias": 35.0, "disclosure": 1.0, "truthful": 0.0, "claim_violation": 1.0, "msg_leakage": 0.0},
    ]
    truthful = metrics.per_turn(CONFIG, record("NO_AGREEMENT", cost=20, value=80, turns=[
        turn(1, "seller", "offer", offer=30, claim=20.0, message="Honestly it cost me 20.00"),
        turn(2, "buyer", "reject", offer=10, message="No."),
    ]))
    assert [(r["truthful"], r["disclosure"], r["msg_leakage"], r["self_serving_bias"], r["claim_violation"])
            for r in truthful] == [(1.0, 1.0, 1.0, 0.0, 0.0), (None, 0.0, 0.0, None, None)]
    game = metrics.per_game(CONFIG, DEAL)
    assert game["seller_claim_drift"] == pytest.approx(10.606601717798213)  # sample sd of 40 and 55: 15 / sqrt(2)
    assert game["buyer_claim_drift"] is None  # fewer than two claims


# --- strategy, replay, sweep ------------------------------------------------------------------------------

class Tactic:
    """This family's strategy as an agent, with nothing but the prompt to go on."""

    def __init__(self, params: dict) -> None:
        self.params = params

    async def act(self, prompt, call_id: str) -> Reply:
        text = strategy.respond(prompt.system, [m.model_dump() for m in prompt.messages], self.params)
        return Reply(text=text, provider="strategy", model="tactic", request={"system": prompt.system})


def test_strategy_reads_its_prompt_and_states_claims_per_params():
    game = make_game()
    state = game.start(1001, None)  # cost 7, value 97
    p = game.prompt(state, "seller")
    assert strategy.recognizes(p.system)
    msgs = [m.model_dump() for m in p.messages]
    truthful = json.loads(strategy.respond(p.system, msgs, {"kind": "boulware"}))
    assert truthful["action"] == "offer" and truthful["stated_valuation"] == 7 and truthful["offer"] == 100
    assert json.loads(strategy.respond(p.system, msgs, {"claim": "inflated", "bluff": 15}))["stated_valuation"] == 22
    assert json.loads(strategy.respond(p.system, msgs, {"claim": "silent"}))["stated_valuation"] is None
    record = asyncio.run(play(game, {"seller": Tactic({"kind": "linear"}), "buyer": Tactic({"kind": "conceder"})},
                              Unit.for_replay("bargaining", "bargaining", 1001, unit_id="u")))
    out = record.outcome
    assert out.status == "AGREEMENT" and 7 <= out.scored.price.value <= 97 and out.repairs_used == 0


def test_replay_rescores_a_recorded_game():
    proc = subprocess.run([sys.executable, "-m", "bargain_ray.replay", str(DATA / "bargaining_replay.json")],
                          capture_output=True, text=True, cwd=ROOT, timeout=120, check=True)
    out = json.loads(proc.stdout)
    assert (out["status"], out["seller_cost"], out["buyer_value"], out["prompt_variant"]) == (
        "AGREEMENT", 7, 97, "explicit_objective")
    assert (out["price"]["exact"], out["round"], out["proposer"]) == ("70", 6, "seller")
    assert out["discount"]["exact"] == "2476099/3200000"  # 0.95^5
    assert out["seller_payoff"]["exact"] == "155994237/3200000"  # 63 x 0.95^5
    assert out["buyer_payoff"]["exact"] == "66854673/3200000"  # 27 x 0.95^5
    assert out["joint_payoff"]["exact"] == "22284891/320000"  # 90 x 0.95^5
    assert (out["calls_attempted"], out["repairs_used"]) == (7, 1)
    assert [a["rule"] for a in out["invalid_attempts"]] == ["unknown_action"]


def test_demo_sweep_writes_tables(tmp_path, ray_session):
    assert main(["+grid=bargaining_demo", f"run.dir={tmp_path}", "run.progress=false", "run.report=false"]) == 0  # in-process
    games = pl.read_parquet(tmp_path / "games.parquet")
    assert games.height == 24 and games["known"].all()
    assert set(games["status"]) <= {"AGREEMENT", "NO_AGREEMENT"} and games["agreement"].any()
    per_seed = games.group_by("seed").agg(pl.col("seller_cost").n_unique(), pl.col("buyer_value").n_unique())
    assert (per_seed["seller_cost"] == 1).all() and (per_seed["buyer_value"] == 1).all()
    turns = pl.read_parquet(tmp_path / "turns.parquet")
    assert turns.height > games.height and set(turns["action"]) <= {"offer", "accept", "reject"}
    journaled = list(read_records(tmp_path))
    records = [r.model_dump(mode="json") for r in journaled]
    rows = [metrics.per_game(CONFIG, r) for r in journaled]
    assert sum(r["deal_rate"] for r in rows) == games["agreement"].sum()
    # every journaled game re-scores to the same outcome from its replies alone
    for rec in records:
        variant = rec["outcome"]["prompt_variant"]
        spec = ReplayFile(game="bargaining", first_speaker="seller", seed=rec["unit"]["seed"],
                          overrides=[f"game.prompt_variant={variant}"],
                          replies=[c["response_text"] for c in rec["calls"]])
        again = replay_transcript(spec).outcome.model_dump(mode="json")  # as journaled
        scored = ("status", "seller_cost", "buyer_value", "price", "round", "seller_payoff", "buyer_payoff")
        assert {k: again[k] for k in scored} == {k: rec["outcome"][k] for k in scored}


def test_eight_cells_rehearse_on_the_simulated_provider(tmp_path, ray_session, monkeypatch):
    # sweep.missing_keys still asks for api_key_env when provider=sim reroutes the models: a dummy stands in.
    monkeypatch.setenv("OPENROUTER_API_KEY", "not-a-key")
    assert main(["+grid=bargaining_8cells", "provider=sim", f"run.dir={tmp_path}", "run.progress=false",
                 "run.report=false", "grid.blocks=1", "grid.seeds=[1001]"]) == 0  # in-process
    games = pl.read_parquet(tmp_path / "games.parquet")
    assert games.height == 8 and games["known"].all()
    names = ("haiku_seller", "haiku_buyer", "haiku_haiku", "llama_llama")  # seed 002's cell names, from the grid
    assert set(games["cell"]) == {n + s for n in names for s in ("", "_explicit")}
    assert set(zip(games["seller_cost"], games["buyer_value"], strict=True)) == {(7, 97)}
    calls = pl.read_parquet(tmp_path / "calls.parquet")
    assert set(calls["provider"]) == {"sim"} and "not-a-key" not in (tmp_path / "calls.parquet").read_bytes().decode("latin-1")
