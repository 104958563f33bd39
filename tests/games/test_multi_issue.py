"""The tickets game of seeds 000 and 001: every rule, the exact wording, the exact figures."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from helpers import DATA, ROOT, game_config, play_replies, reply

from bargain_ray.core.figures import Figure
from bargain_ray.games import load_game
from bargain_ray.games.multi_issue import engine, metrics, prompts, scoring

CHEAP = {"unit_price_usd": 60, "cancellation_fee_pct": 0, "name_change_notice_hours": 0}
MID = {"unit_price_usd": 70.5, "cancellation_fee_pct": 20, "name_change_notice_hours": 48}


@pytest.fixture(scope="module")
def tickets():
    return load_game(game_config("tickets"))


def test_turn_1_and_2_requests_match_seed_000(tickets):
    seed = json.loads((DATA / "seed000.json").read_text())
    first, second = seed["requests"]
    state = tickets.start(0, "buyer")
    p = tickets.prompt(state, "buyer")
    assert p.system == first["system"]
    assert [m.model_dump() for m in p.messages] == first["messages"]
    state = tickets.apply(state, "buyer", tickets.parse(state, "buyer", seed["buyer_reply"]))
    p = tickets.prompt(state, "seller")
    assert p.system == second["system"]
    assert [m.model_dump() for m in p.messages] == second["messages"]


def test_replay_of_seed_001_reproduces_its_outcome_exactly():
    out = subprocess.run(
        [sys.executable, "-m", "bargain_ray.replay", str(DATA / "seed001_replay.json")],
        capture_output=True, text=True, check=True, cwd=ROOT,
    )
    record = json.loads(out.stdout)
    seed = ["unit_id", "block", "position", "phase", "condition", "pairing", "assignment", "cell", "models_by_role",
            "agent_of_role", "first_speaker", "calls_attempted", "repairs_used", "invalid_attempts", "bounds",
            "status", "known", "reason", "agreement", "no_deal", "deal", "utilities"]
    assert list(record)[:len(seed)] == seed and list(record)[-1] == "technical_pass"  # seed 001's order
    assert record["unit_id"] == "negotiation-c3rep40-20261027-b04-p04-oo-a3" and record["first_speaker"] == "seller"
    assert record["status"] == "AGREEMENT" and record["known"] is True
    assert record["utilities"]["buyer"] == {"exact": "2531/40", "value": 63.275}
    assert record["utilities"]["seller"] == {"exact": "1267/20", "value": 63.35}
    assert record["joint_gain"] == {"exact": "693/8", "value": 86.625}
    assert record["efficiency"] == {"exact": "77/80", "value": 0.9625}
    assert record["buyer_share_of_joint_gain"]["exact"] == "577/1155"
    assert record["bounds"] == {"buyer_gain": [-20, 80], "seller_gain": [-20, 80], "joint_gain": [0, 90]}
    assert record["deal"] == {
        "terms": {"unit_price_usd": "64.50", "cancellation_fee_pct": "37.00", "name_change_notice_hours": "96.00"},
        "offer_id": "O8", "proposer": "buyer", "acceptor": "seller",
    }
    assert record["calls_attempted"] == 9 and record["repairs_used"] == 0 and record["technical_pass"] is True


@pytest.mark.parametrize(
    ("bad", "rule", "says"),
    [
        ("I offer $70. " + reply("OFFER", terms=MID), "not_one_json_object", "exactly one JSON object"),
        (reply("OFFER", terms=MID) + reply("NONE"), "not_one_json_object", "exactly one JSON object"),
        ("```json\n" + reply("OFFER", terms=MID) + "\n```", "not_one_json_object", "exactly one JSON object"),
        ("[1, 2]", "not_one_json_object", "exactly one JSON object"),
        (reply("OFFER", terms={"unit_price_usd": 70, "cancellation_fee_pct": 10}), "missing_term", "name_change_notice_hours"),
        (reply("OFFER", terms=MID | {"unit_price_usd": 100.01}), "term_out_of_range", "from 60.00 to 100.00"),
        (reply("OFFER", terms=MID | {"cancellation_fee_pct": -1}), "term_out_of_range", "from 0.00 to 100.00"),
        (reply("OFFER", terms=MID | {"unit_price_usd": 70.125}), "too_many_decimals", "at most two decimal places"),
        (reply("OFFER", terms=MID | {"unit_price_usd": "70"}), "term_not_number", "must be a number"),
        (reply("OFFER", terms=MID | {"seats": 3}), "unknown_term", "Unknown term 'seats'"),
        (reply("OFFER"), "terms_missing", '"terms" must give every term: unit_price_usd, '),
        (reply("OFFER", terms={"seats": 3}), "unknown_term", "Unknown term 'seats'"),  # before any missing one
        (reply("OFFER", terms={"unit_price_usd": "70"}), "term_not_number", "must be a number"),  # in term order
        (reply("OFFER", terms=MID, message=" ".join(["word"] * 81)), "message_too_long", "81 words; it must be at most 80"),
        (reply("COUNTER", terms=MID), "unknown_action", "Unknown action 'COUNTER'"),
        (reply("OFFER", offer_id="O1", terms=MID), "offer_id_on_offer", '"offer_id" must be null'),
        (reply("NONE", terms=MID), "terms_without_offer", '"terms" must be null'),
        (reply("ACCEPT", offer_id="O1"), "accept_without_offer", "no standing offer"),
        (json.dumps({"action": "NONE", "offer_id": None, "terms": None}), "missing_key", "'message'"),
        (json.dumps({"action": "NONE", "offer_id": None, "terms": None, "message": "", "x": 1}), "unknown_key", "'x'"),
    ],
)
def test_each_rule_is_named_and_explained(tickets, bad, rule, says):
    state = tickets.start(0, "buyer")
    with pytest.raises(Exception) as info:
        tickets.parse(state, "buyer", bad)
    assert info.value.rule == rule
    assert says in str(info.value)
    assert says in tickets.repair_message(state, "buyer", info.value)


def test_80_words_and_two_decimals_are_allowed(tickets):
    state = tickets.start(0, "buyer")
    ok = reply("OFFER", terms=MID | {"unit_price_usd": 70.12}, message=" ".join(["word"] * 80))
    assert tickets.parse(state, "buyer", ok).kind == "OFFER"
    assert tickets.parse(state, "buyer", "  " + reply("OFFER", terms=MID | {"unit_price_usd": 70.100}) + "\n").kind == "OFFER"


def test_accepting_own_or_stale_offer_is_refused_and_ids_are_turn_numbers():
    record = play_replies(
        game_config("tickets"),
        [
            reply("OFFER", terms=MID),  # buyer O1
            reply("OFFER", terms=CHEAP),  # seller O2 replaces O1
            reply("ACCEPT", offer_id="O1"),  # buyer: stale
            reply("ACCEPT", offer_id="O2"),  # buyer: accepts O2
        ],
        first_speaker="buyer",
    )
    out = record.outcome
    assert out.status == "AGREEMENT" and out.scored.deal.offer_id == "O2"
    assert [i.rule for i in out.invalid_attempts] == ["accept_stale_offer"]
    assert out.repairs_used == 1 and out.calls_attempted == 4

    own = [reply("OFFER", terms=MID), reply("NONE"), reply("ACCEPT", offer_id="O1")] + [reply("NONE")] * 10
    record = play_replies(game_config("tickets"), own, first_speaker="buyer")
    assert [i.rule for i in record.outcome.invalid_attempts] == ["accept_own_offer"]
    assert "O1 is your own offer: you cannot accept your own offer." in record.calls[3].request["messages"][2]["content"]
    assert record.outcome.status == "NO_AGREEMENT"


def test_repair_request_carries_the_invalid_reply_and_the_error():
    bad = reply("OFFER", terms=MID | {"unit_price_usd": 59})
    record = play_replies(game_config("tickets"), [bad, reply("OFFER", terms=MID)] + [reply("NONE")] * 11, first_speaker="buyer")
    first, second = record.calls[0], record.calls[1]
    assert first.valid is False and first.rule == "term_out_of_range"
    assert second.repair == 1 and second.turn == 1
    messages = second.request["messages"]
    assert len(messages) == 3
    assert messages[1] == {"role": "assistant", "content": bad}
    assert "unit_price_usd is 59: it must be from 60.00 to 100.00" in messages[2]["content"]
    assert messages[0] == first.request["messages"][0]
    assert record.outcome.status == "NO_AGREEMENT" and record.outcome.reason == "turn_limit"


def test_repairs_run_out_into_a_format_failure_and_are_configurable():
    junk = ["not json"] * 3
    record = play_replies(game_config("tickets"), junk, first_speaker="seller")
    out = record.outcome
    assert out.status == "FORMAT_FAILURE" and out.known is True and out.technical_pass is False
    assert out.calls_attempted == 3 and out.repairs_used == 2 and len(out.invalid_attempts) == 3
    assert out.scored.utilities is None
    record = play_replies(game_config("tickets", max_repairs=0), junk, first_speaker="seller")
    assert record.outcome.calls_attempted == 1 and record.outcome.status == "FORMAT_FAILURE"


def test_turn_12_offer_gets_one_final_reply_that_can_only_accept_or_end():
    replies = [reply("NONE")] * 11 + [reply("OFFER", terms=MID)]
    record = play_replies(game_config("tickets"), replies + [reply("OFFER", terms=CHEAP), reply("ACCEPT", offer_id="O12")], first_speaker="buyer")
    out = record.outcome
    assert out.status == "AGREEMENT" and out.scored.deal.offer_id == "O12" and out.scored.deal.acceptor == "buyer"
    assert out.invalid_attempts[0].rule == "final_reply"
    final_prompt = record.calls[12].request["messages"][0]["content"]
    assert "This is the final reply after turn 12" in final_prompt and "ACCEPT O12" not in final_prompt.split("Public record")[0]

    record = play_replies(game_config("tickets"), replies + [reply("END")], first_speaker="buyer")
    assert record.outcome.status == "NO_AGREEMENT" and record.outcome.reason == "final_reply_end"
    assert record.outcome.scored.utilities["buyer"].value == 20


def test_end_is_not_an_action_before_the_final_reply(tickets):
    with pytest.raises(Exception) as info:
        tickets.parse(tickets.start(0, "buyer"), "buyer", reply("END"))
    assert info.value.rule == "unknown_action"
    assert str(info.value) == 'Unknown action "END": use "OFFER", "ACCEPT" or "NONE".'


def test_the_engine_raises_a_rule_and_its_facts_and_prompts_words_it(tickets):
    """No sentence is written in the engine: it names the rule and the facts; prompts renders the words."""
    bad = reply("OFFER", terms=MID | {"unit_price_usd": 59})
    with pytest.raises(Exception) as info:
        engine.parse(tickets.config, tickets.start(0, "buyer"), "buyer", bad)
    err = info.value
    assert (err.rule, err.sentence) == ("term_out_of_range", None)
    assert {k: str(v) for k, v in err.facts.items()} == {
        "term": "unit_price_usd", "value": "59", "low": "60.0", "high": "100.0"}
    assert prompts.rule_sentence(tickets.config, err) == "unit_price_usd is 59: it must be from 60.00 to 100.00."


def test_no_agreement_after_12_turns_scores_fallbacks():
    record = play_replies(game_config("tickets"), [reply("NONE")] * 12, first_speaker="seller")
    out = record.outcome
    assert out.status == "NO_AGREEMENT" and out.scored.no_deal is True and out.scored.joint_gain.value == 0
    assert out.scored.efficiency is None and out.scored.efficiency_all_assigned == Figure(exact="0", value=0)
    assert len(record.turns) == 12 and record.turns[0].role == "seller"


def test_public_record_lists_every_turn_in_order():
    record = play_replies(
        game_config("tickets"),
        [reply("OFFER", terms=MID, message="First."), reply("NONE", message="Thinking."), reply("NONE")] + [reply("NONE")] * 9,
        first_speaker="buyer",
    )
    text = record.calls[2].request["messages"][0]["content"]
    assert (
        'Turn 1, Buyer: "First."\n Action: OFFER O1 (unit_price_usd 70.50, cancellation_fee_pct 20.00, '
        'name_change_notice_hours 48.00)\nTurn 2, Seller: "Thinking."\n Action: NONE\n\n'
        "Standing offer: O1, made by Buyer"
    ) in text
    assert "It is your own offer, so you cannot accept it." in text


def test_another_scenario_is_only_another_config():
    cfg = game_config("tickets")
    cfg |= {
        "name": "laptops",
        "max_turns": 4,
        "terms": [
            {"name": "price_eur", "description": "the price of each laptop in euros", "min": 500, "max": 900,
             "symbol": "q", "offset": 500, "scale": 100, "levels": 4},
            {"name": "warranty_months", "description": "the warranty length in months", "min": 0, "max": 36,
             "symbol": "w", "scale": 12, "levels": 3},
        ],
        "roles": {
            "client": {"label": "Client", "org": "Acme", "description": "a firm buying laptops", "no_agreement": 10,
                       "stakes": {"price_eur": {"weight": 60, "prefers": "low"}, "warranty_months": {"weight": 40, "prefers": "high"}}},
            "vendor": {"label": "Vendor", "org": "Byte", "description": "a laptop vendor", "no_agreement": 30,
                       "stakes": {"price_eur": {"weight": 70, "prefers": "high"}, "warranty_months": {"weight": 30, "prefers": "low"}}},
        },
        "share_role": "client",
    }
    game = load_game(cfg)
    system = game.prompt(game.start(0, None), "client").system
    assert "There are TWO negotiated terms" in system
    assert "points = 60 x (1 - q/4) + 40 x (w/3), where q = (price_eur - 500) / 100, w = warranty_months / 12" in system
    assert "at most 4 turns" in system and "gets 10 points" in system
    terms = {"price_eur": 700, "warranty_months": 12}
    record = play_replies(cfg, [reply("OFFER", terms=terms), reply("ACCEPT", offer_id="O1")])
    # client: 60*(1-2/4) + 40*(1/3) = 130/3; vendor: 70*(2/4) + 30*(1-1/3) = 55
    assert record.outcome.scored.utilities["client"].exact == "130/3"
    assert record.outcome.scored.utilities["vendor"].exact == "55"
    # best joint: price at 900 (vendor 70 > client 60), warranty at 36 (client 40 > vendor 30); minus fallbacks 40
    assert metrics.bounds(game.config)["joint_gain"] == (0, 70)


def test_scores_follow_the_brief_text(tickets):
    """The numbers in the rendered formula, evaluated by hand, equal the engine's scores."""
    from fractions import Fraction

    terms = {"unit_price_usd": "64.50", "cancellation_fee_pct": "37.00", "name_change_notice_hours": "96.00"}
    p, r, t = (Fraction("64.50") - 60) / 10, Fraction(37) / 25, Fraction(96) / 24
    assert "50 x (1 - p/4) + 30 x (1 - r/4) + 20 x (1 - t/4)" in tickets.prompt(tickets.start(0, None), "buyer").system
    assert scoring.utility(tickets.config, "buyer", terms) == 50 * (1 - p / 4) + 30 * (1 - r / 4) + 20 * (1 - t / 4)
    assert scoring.utility(tickets.config, "seller", terms) == 20 * (p / 4) + 30 * (r / 4) + 50 * (t / 4)
