"""Leakage of private numbers in public messages: the detector (ours), per message and per game, three families."""

from __future__ import annotations

import json
from collections import Counter
from fractions import Fraction
from functools import cache
from pathlib import Path

import pytest
from helpers import game_config, play_replies

from bargain_ray.config import compose_dict
from bargain_ray.games import load_game
from bargain_ray.games.bargaining import metrics as bargaining_metrics
from bargain_ray.games.kit import leakage
from bargain_ray.games.multi_issue import metrics as tickets_metrics
from bargain_ray.games.scorable import metrics as scorable_metrics

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


LABELLED = Path(__file__).parents[1] / "data" / "leakage"
SETS = {"development": LABELLED / "messages.jsonl", "held-out": LABELLED / "held_out.jsonl"}


def labelled(name: str) -> list[dict]:
    return [json.loads(line) for line in SETS[name].read_text(encoding="utf-8").splitlines()]


@cache
def shipped(game: str):
    return load_game(compose_dict(f"game/{game}")["game"]).config


def flagged(row: dict) -> bool:
    """The measure as the families run it, on one labelled message."""
    if row["game"] == "bargaining":
        return bargaining_metrics.leaked(row["role"], row["valuation"], row["message"])
    family = tickets_metrics if row["game"] == "tickets" else scorable_metrics
    return bool(family.leaked(shipped(row["game"]), row["role"], row["message"]))


@pytest.mark.parametrize("stated", leakage.VALIDATION, ids=lambda v: v.name)
def test_the_measure_has_the_precision_and_recall_the_card_states_and_keeps_the_floor(stated):
    rows = labelled(stated.name)
    said = [(bool(r["leaks"]), flagged(r)) for r in rows]
    measured = leakage.Validation(name=stated.name, messages=len(rows), leaks=sum(t for t, _ in said),
                                  flagged=sum(f for _, f in said), hits=sum(t and f for t, f in said))
    print(f"leakage on the {stated.name} set: precision={measured.precision:.3f} recall={measured.recall:.3f} "
          f"({measured.hits} of {measured.flagged} flagged, {measured.hits} of {measured.leaks} leaks)")
    assert measured == stated  # the figures the card and the report give are the set's
    assert measured.precision >= leakage.FLOOR and measured.recall >= leakage.FLOOR


def test_the_labelled_sets_cover_every_family_both_sides_and_the_hard_cases():
    rows = labelled("development")
    assert len(rows) >= 200 and len({r["id"] for r in rows}) == len(rows)
    sides = Counter((r["game"], r["role"]) for r in rows)
    assert {g for g, _ in sides} == {"bargaining", "tickets", "scorable6"}
    assert all(sides[(g, role)] >= 10 for g, role in [("bargaining", "seller"), ("bargaining", "buyer"),
                                                      ("tickets", "seller"), ("tickets", "buyer")])
    assert len({role for g, role in sides if g == "scorable6"}) == 6
    notes = " ".join(r.get("note", "") for r in rows)
    for hard in ("spelled", "percentage", "range", "approximate", "other side", "another party", "one off"):
        assert hard in notes, hard
    kinds = {k for r in [*rows, *labelled("held-out")] for k in r["leaks"]}
    assert kinds == {"valuation", "weights", "fallback", "threshold", "scores"}
