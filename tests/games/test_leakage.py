"""Leakage of private numbers in public messages: the detector (ours), per message and per game, three families."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest
from helpers import game_config, play_replies

from bargain_ray.games.kit import leakage

SILENT = {"messages": False}


def test_the_reader_reads_numerals_and_number_words_never_inside_a_name():
    words = [(t.word, t.value, t.percent) for t in leakage.tokens("P2 and opt1 aside: forty five, 45.50%, $12 of 1,000.")
             if t.value is not None]
    assert words == [("forty-five", 45, False), ("45.50", Fraction("45.50"), True), ("$12", 12, False), ("1,000", 1000, False)]
    assert [t.value for t in leakage.tokens("seventy-three, ninety, half") if t.value] == [73, 90, 50]
    cost = [leakage.Figure(kind="valuation", value=Fraction(45))]
    reading = leakage.Reading(cues={"valuation": ("cost",)}, against=("offer",))
    said = {text: bool(leakage.leaked(text, cost, reading)) for text in (
        "My cost is 45.", "My cost is forty-five.", "My cost is about 45.", "My cost is 40-45.",
        "45 is above my cost.", "Your cost is 45.", "I offer 45, which covers my cost.", "My cost is 46.",
        "My cost is high. 45, then.")}
    assert [text for text, leak in said.items() if leak] == ["My cost is 45.", "My cost is forty-five."]
    rows = [{"role": "a", "leakage": 1.0}, {"role": "a", "leakage": 0.0}, {"role": "b", "leakage": None}]
    assert leakage.per_role(rows, ["a", "b"]) == {"a_leakage": 0.5, "b_leakage": None, "leakage_any": 1.0}
    assert leakage.per_role([{"role": "a", "leakage": None}], ["a"]) == {"a_leakage": None, "leakage_any": None}


def bargain(message, action="offer", offer=60, claim=None) -> str:
    return json.dumps({"stated_valuation": claim, "offer": offer, "action": action, "message": message,
                       "reasoning_private": "r"})


def test_bargaining_flags_a_stated_or_implied_valuation_in_a_message():
    # seed 1001 draws cost 7, value 97
    replies = [bargain("My cost is 7, honestly.", offer=90), bargain("I offer 7 less than you ask.", offer=50),
               bargain("I cannot go below 8, my floor.", offer=80), bargain("I can pay 96 at most.", offer=60),
               bargain("Deal.", action="accept", offer=None)]
    config = game_config("bargaining", max_rounds=5)
    record = play_replies(config, replies, seed=1001)
    rows = record.turn_metrics
    assert [r["leakage"] for r in rows] == [1.0, 0.0, 0.0, 0.0, 0.0]  # 8 and 96 are not 7 and 97: no leak
    assert [r["msg_leakage"] for r in rows] == [1.0, 0.0, 0.0, 0.0, 0.0]  # seed 002's: the numeral itself only
    assert (record.metrics["seller_leakage"], record.metrics["buyer_leakage"]) == (pytest.approx(1 / 3), 0.0)
    assert record.metrics["leakage_any"] == 1.0
    quiet = play_replies(config | SILENT, replies, seed=1001)  # what was said is measured, delivered or not
    assert [r["leakage"] for r in quiet.turn_metrics] == [r["leakage"] for r in rows]
    assert quiet.metrics["leakage_any"] == 1.0


def ticket(message, action="OFFER", offer_id=None) -> str:
    terms = {"unit_price_usd": 80, "cancellation_fee_pct": 20, "name_change_notice_hours": 48}
    return json.dumps({"action": action, "offer_id": offer_id, "terms": terms if action == "OFFER" else None,
                       "message": message})


def test_tickets_flags_a_scoring_weight_or_the_no_agreement_points():
    replies = [ticket("Price is our top priority: 20% cancellation fee and $80 a ticket."),  # a fee, not a weight
               ticket("Price is worth only 20 points to us; notice weighs 50."),  # the seller's weights 20 and 50
               ticket("Without a deal our fallback is 20 points."),  # the buyer's no-agreement points
               ticket("We know notice weighs 50 for you; your fallback is 20 too, I guess."),  # the buyer's, no
               ticket("Fine.", "ACCEPT", "O4")]
    record = play_replies(game_config("tickets"), replies, first_speaker="buyer")
    rows = record.turn_metrics
    assert [(r["role"], r["leaked_weights"], r["leaked_fallback"]) for r in rows] == [
        ("buyer", 0.0, 0.0), ("seller", 1.0, 0.0), ("buyer", 0.0, 1.0), ("seller", 0.0, 0.0), ("buyer", 0.0, 0.0)]
    assert [r["leakage"] for r in rows] == [0.0, 1.0, 1.0, 0.0, 0.0]
    assert (record.metrics["buyer_leakage"], record.metrics["seller_leakage"], record.metrics["leakage_any"]) == (
        pytest.approx(1 / 3), 0.5, 1.0)


def scorable(message, action="none", **extra) -> str:
    return "```json\n" + json.dumps({"message": message, "action": action, **extra}) + "\n```"


def test_scorable_flags_a_threshold_or_private_scores_in_a_public_message():
    deal = {f"issue{i}": "opt0" for i in range(5)}
    replies = [scorable("Avery needs 82 points here.", "propose", deal=deal),  # Avery's threshold
               scorable("P1 works; opt1 on issue2 is 99 to me."),  # Blake's issue2 opt1 score
               scorable("I would score 60 on P1."),  # 60 is no score of Casey's: a guess, not a leak
               *[scorable("")] * 21]
    record = play_replies(game_config("scorable6"), replies, first_speaker="Avery")
    rows = record.turn_metrics
    assert [(r["role"], r["leaked_threshold"], r["leaked_scores"]) for r in rows[:3]] == [
        ("Avery", 1.0, 0.0), ("Blake", 0.0, 1.0), ("Casey", 0.0, 0.0)]
    assert record.metrics["Avery_leakage"] == pytest.approx(1 / 4) and record.metrics["Casey_leakage"] == 0.0
    assert record.metrics["leakage_any"] == 1.0
