"""Rules the seeds do not state are settings: each has a default that keeps today's play, and each, turned off,
changes play and a text a model reads (so the resume fingerprint sees it)."""

from __future__ import annotations

import json

from helpers import game_config, play_replies

from bargain_ray.games import load_game


def bargain(action="offer", offer=50, message="hi", claim=None) -> str:
    return json.dumps({"stated_valuation": claim, "offer": offer, "action": action, "message": message,
                       "reasoning_private": "mine"})


def texts(config: dict) -> dict[str, str]:
    return {k: t.text for k, t in load_game(config).texts().items()}


def test_the_message_cap_is_enforced_only_when_set_and_every_length_is_measured():
    long = "x" * 400
    capped = play_replies(game_config("bargaining", max_rounds=2), [bargain(message=long), bargain(offer=60),
                                                                     bargain(offer=60)])
    assert [a.rule for a in capped.outcome.invalid_attempts] == ["message_too_long"]
    free = game_config("bargaining", max_rounds=2, max_message_chars=None)
    record = play_replies(free, [bargain(message=long), bargain(offer=60, message="ok")])
    assert record.outcome.invalid_attempts == [] and record.outcome.known
    assert [m["message_chars"] for m in record.turn_metrics] == [400, 2]
    assert [m["message_chars"] for m in capped.turn_metrics] == [2, 2]  # the repaired reply's message
    on, off = texts(game_config("bargaining")), texts(free)
    assert "at most 300 characters" in on["brief:seller"] and "characters" not in off["brief:seller"]
    assert '"maxLength": 300' in on["reply_schema"] and "maxLength" not in off["reply_schema"]
    assert "rule:message_too_long" in on and "rule:message_too_long" not in off


def test_round_one_and_a_reject_with_nothing_standing_are_settings():
    strict = play_replies(game_config("bargaining", max_rounds=2), [bargain("reject", None), bargain(offer=70),
                                                                     bargain("accept", None)])
    assert [a.rule for a in strict.outcome.invalid_attempts] == ["first_round_offer"]
    loose = game_config("bargaining", max_rounds=3, first_round_offer=False, reject_needs_offer=False)
    record = play_replies(loose, [bargain("reject", None), bargain(offer=70), bargain("accept", None)])
    assert record.outcome.invalid_attempts == [] and record.outcome.status == "AGREEMENT"
    assert [t.fields.action for t in record.turns] == ["reject", "offer", "accept"]
    half = game_config("bargaining", first_round_offer=False)  # a round-1 reject is still refused: nothing stands
    refused = play_replies(half | {"max_rounds": 2}, [bargain("reject", None), bargain(offer=70), bargain(offer=70)])
    assert [a.rule for a in refused.outcome.invalid_attempts] == ["no_standing_offer"]
    on, off = texts(game_config("bargaining")), texts(loose)
    assert "Round 1 must be an offer." in on["brief:buyer"] and "Round 1 must be an offer." not in off["brief:buyer"]
    assert '"reject" with none standing passes the turn' in off["brief:buyer"]
    assert "rule:first_round_offer" in on and "rule:first_round_offer" not in off


def verdict(**fields) -> str:
    base = {"agreement_reached": False, "allocation_type": "none", "allocation": "Nothing yet.",
            "rationale": "No proposal answered.", "confidence": 0.5}
    return json.dumps(base | fields)


def test_the_observer_validity_checks_are_settings():
    odd = verdict(agreement_reached=True, allocation_type="none", confidence=1.5)
    strict = play_replies(game_config("orange"), ["Can I have the juice?", odd, odd, odd])
    assert strict.outcome.status == "TECHNICAL_ERROR" and strict.outcome.reason == "observer_failure"
    assert {a.rule for a in strict.outcome.invalid_attempts} == {"confidence_out_of_range"}
    loose = game_config("orange", verdict_confidence_in_range=False, verdict_consistent=False)
    record = play_replies(loose, ["Can I have the juice?", odd])
    assert record.outcome.status == "AGREEMENT" and record.outcome.invalid_attempts == []
    assert (record.outcome.scored.allocation_type, record.outcome.scored.observer_confidence) == ("none", 1.5)
    still = play_replies(loose, ["Can I have the juice?", verdict(confidence="high"), verdict(confidence=0.4),
                                 "Take the juice.", verdict(agreement_reached=True, allocation_type="lopsided")])
    assert [a.rule for a in still.outcome.invalid_attempts] == ["confidence_out_of_range"]  # a number, still
    on, off = texts(game_config("orange")), texts(loose)
    assert on["rule:confidence_out_of_range"] == '"confidence" must be a number between 0 and 1.'
    assert off["rule:confidence_out_of_range"] == '"confidence" must be a number.'
    assert "rule:inconsistent_verdict/agreed" in on and not any(k.startswith("rule:inconsistent") for k in off)


def test_the_free_text_turn_limit_is_a_setting():
    record = play_replies(game_config("orange", max_turns=2), ["Hello.", verdict(), "Hi.", verdict()])
    assert (record.outcome.status, record.outcome.reason, record.outcome.scored.party_turns) == (
        "NO_AGREEMENT", "turn_limit", 2)
