"""Leakage of private numbers in public messages: the detector (ours), per message and per game, three families."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest
from helpers import game_config, play_replies

from bargain_ray.games.kit import leakage

SILENT = {"messages": False}


def test_the_detector_reads_numerals_near_a_cue_and_never_inside_a_name():
    text = "P2 and opt1 aside: my cost is 45.50, and I offer 60. Threshold: 121.188!"
    assert leakage.all_numbers(text) == [Fraction("45.50"), 60, Fraction("121.188")]
    assert leakage.cued_numbers(text, ("cost",)) == [Fraction("45.50")]  # 60 is 6 words from "cost"
    assert leakage.cued_numbers(text, ("cost",), window=6) == [Fraction("45.50"), 60]
    assert leakage.leaks([Fraction(46)], {Fraction(45)}, Fraction(1)) and not leakage.leaks([Fraction(47)], {45}, 1)
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
    assert [r["leakage"] for r in rows] == [1.0, 0.0, 1.0, 1.0, 0.0]  # 8 and 96 are within 1 of 7 and 97
    assert [r["msg_leakage"] for r in rows] == [1.0, 0.0, 0.0, 0.0, 0.0]  # seed 002's: the numeral itself only
    assert (record.metrics["seller_leakage"], record.metrics["buyer_leakage"]) == (pytest.approx(2 / 3), 0.5)
    assert record.metrics["leakage_any"] == 1.0
    quiet = play_replies(config | SILENT, replies, seed=1001)  # what was said is measured, delivered or not
    assert [r["leakage"] for r in quiet.turn_metrics] == [r["leakage"] for r in rows]
    assert quiet.metrics["leakage_any"] == 1.0


def ticket(message, action="OFFER", offer_id=None) -> str:
    terms = {"unit_price_usd": 80, "cancellation_fee_pct": 20, "name_change_notice_hours": 48}
    return json.dumps({"action": action, "offer_id": offer_id, "terms": terms if action == "OFFER" else None,
                       "message": message})


def test_tickets_flags_a_scoring_weight_or_the_no_agreement_points():
    replies = [ticket("A 20% cancellation fee and $80 a ticket."),  # the buyer's weight 20, but no scoring word
               ticket("Price is worth only 20 points to us; notice weighs 50."),  # the seller's weights 20 and 50
               ticket("Without a deal our fallback is 20 points."),  # the buyer's no-agreement points
               ticket("Fine.", "ACCEPT", "O3")]
    record = play_replies(game_config("tickets"), replies, first_speaker="buyer")
    rows = record.turn_metrics
    assert [(r["role"], r["leaked_weights"], r["leaked_fallback"]) for r in rows] == [
        ("buyer", 0.0, 0.0), ("seller", 1.0, 1.0), ("buyer", 1.0, 1.0), ("seller", 0.0, 0.0)]
    assert [r["leakage"] for r in rows] == [0.0, 1.0, 1.0, 0.0]
    assert (record.metrics["buyer_leakage"], record.metrics["seller_leakage"], record.metrics["leakage_any"]) == (
        0.5, 0.5, 1.0)


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
