"""The free-text family (seed 004): rules, wording, privacy, observer failure, replay, a sweep."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections import deque
from functools import cache
from pathlib import Path

import polars as pl
import pytest
import yaml
from helpers import CONF
from pydantic import ValidationError

from bargain_ray.__main__ import main
from bargain_ray.agents.replay import ReplayAgent
from bargain_ray.agents.strategy import StrategyAgent
from bargain_ray.config import compose_dict
from bargain_ray.core.status import Status
from bargain_ray.core.unit import Unit
from bargain_ray.games import families, load_game
from bargain_ray.games.base import RuleError
from bargain_ray.games.freetext import engine, metrics, prompts, strategy
from bargain_ray.play.loop import play
from bargain_ray.play.rescore import ReplayFile, replay_transcript

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
SEED = ROOT / "tests" / "data" / "seeds" / "004.txt"  # seed 004 as shipped in ../shared/seeds
MODELS = {p.stem: yaml.safe_load(p.read_text()) for p in (CONF / "model").glob("*.yaml")}
TALKERS = {"I": "scripted-integrative", "G": "scripted-greedy", "D": "scripted-distributive",
           "H": "scripted-hardline", "R": "rule-observer"}
EXPECTED = {  # pairing (party A, party B, observer) -> (status, allocation type, party turns)
    "IIR": ("AGREEMENT", "integrative_full", 3),
    "IGR": ("AGREEMENT", "integrative_partial", 3),
    "DDR": ("AGREEMENT", "distributive", 2),
    "HDR": ("AGREEMENT", "lopsided", 8),
    "HHR": ("NO_AGREEMENT", "none", 12),
    "IDR": ("AGREEMENT", "integrative_full", 4),
}


@cache
def game(name: str = "orange", *overrides: str):
    return load_game(compose_dict(f"game/{name}", list(overrides))["game"])


def record_config(record):
    """The config of the scenario a record was played as (its unit's game)."""
    return game(record.unit.game).config


def run(g, agents, unit_id: str = "u"):
    return asyncio.run(play(g, agents, Unit.for_replay(g.config.name, g.config.family, unit_id=unit_id)))


def scripted(g, pairing: str) -> dict[str, StrategyAgent]:
    """Strategy agents named as their model configs, so model names are there to leak."""
    return {
        role: StrategyAgent(MODELS[TALKERS[letter]]["name"], MODELS[TALKERS[letter]]["strategy"], "freetext")
        for role, letter in zip(g.roles, pairing, strict=True)
    }


def verdict(**fields) -> str:
    base = {"agreement_reached": False, "allocation_type": "none", "allocation": "Nothing agreed yet.",
            "rationale": "No proposal has been answered.", "confidence": 0.8}
    return json.dumps(base | fields)


def seed_section(start: str, end: str) -> str:
    text = SEED.read_text(encoding="utf-8")
    return text[text.index(start) + len(start): text.index(end)].rstrip("\n")


# --- wording -------------------------------------------------------------------------------

def test_orange_renders_seed_004_byte_for_byte():
    g = game()
    assert prompts.brief(g.config, "party_a") == seed_section("Party A — private briefing\n", "\nParty B — private")
    assert prompts.brief(g.config, "party_b") == seed_section("Party B — private briefing\n", "\nObserver — ")
    observer = seed_section("Observer — classification instructions\n", "What agreement did")
    assert prompts.observer_instructions(g.config) == observer
    p = g.prompt(g.start(0, None), "observer")
    assert p.system == observer and p.json_schema == prompts.VERDICT_SCHEMA


def test_battery_pack_has_the_orange_form():
    orange, battery = game(), game("battery")
    for role in ("party_a", "party_b"):
        o, b = prompts.brief(orange.config, role), prompts.brief(battery.config, role)
        situation = battery.config.parties[role].situation
        assert b.replace(situation, "").replace("battery pack", "orange") == o.replace(
            orange.config.parties[role].situation, "")
    assert "cells" in battery.config.parties["party_a"].situation
    assert "casing and electronics" in battery.config.parties["party_b"].situation
    obs_o, obs_b = prompts.observer_instructions(orange.config), prompts.observer_instructions(battery.config)
    assert obs_b.count("\n") == obs_o.count("\n")
    assert "the cells entirely to one party and\nthe casing and electronics entirely to the other" in obs_b


# --- rules ---------------------------------------------------------------------------------

def test_party_a_first_then_strict_alternation_with_a_verdict_after_every_message():
    g = game()
    s = g.start(0, None)
    order = []
    for text in ("I need the juice. What do you need?", "I need the peel. You take the juice?", "Yes. Agreed."):
        role = g.to_move(s)
        order.append(role)
        s = g.apply(s, role, g.parse(s, role, text))
        order.append(g.to_move(s))
        s = g.apply(s, "observer", g.parse(s, "observer", verdict()))
    assert order == ["party_a", "observer", "party_b", "observer", "party_a", "observer"]
    assert [v.turn for v in s.verdicts] == [1, 2, 3]
    assert g.to_move(g.start(0, "party_b")) == "party_b"
    with pytest.raises(ValueError, match="not a party"):
        g.start(0, "observer")


@pytest.mark.parametrize(
    ("reply", "rule", "seen"),
    [
        ("   \n ", "empty_message", "Your message is empty: write 2 to 4 sentences to the other party."),
        ("So " + "very " * 119 + "much.", "message_too_long", "Your message has 121 words; it must have at most 120."),
    ],
)
def test_party_message_rules(reply, rule, seen):
    g = game("orange", "game.max_words=120")  # the hard word limit, off by default, set here
    s = g.start(0, None)
    with pytest.raises(RuleError) as err:
        g.parse(s, "party_a", reply)
    assert err.value.rule == rule and seen in str(err.value)
    repair = g.prompt(s, "party_a").repaired(reply, g.repair_message(s, "party_a", err.value))
    assert repair.messages[-1].content.startswith(f"Your message was not accepted: {err.value}")
    assert "2 to 4 sentences" in repair.messages[-1].content


def test_sentence_count_is_measured_not_enforced_and_recorded_per_message():
    g = game()
    assert g.config.max_words is None  # the hard limit is off by default
    s = g.start(0, None)
    six = "One. Two! Three? Four. Five. " + "very " * 150 + "six."
    said = g.parse(s, "party_a", six)
    assert (said.sentences, said.words) == (6, 156)
    s = g.apply(s, "party_a", said)
    fields = g.turn_fields(s, "party_a", said)
    assert (fields.sentences, fields.words, fields.message) == (6, 156, six.strip())
    capped = game("orange", "game.max_words=155")
    with pytest.raises(RuleError) as err:
        capped.parse(capped.start(0, None), "party_a", six)
    assert err.value.rule == "message_too_long"
    assert str(err.value) == "Your message has 156 words; it must have at most 155."


def test_short_messages_and_numbers_are_kept():
    g = game()
    s = g.start(0, None)
    said = g.parse(s, "party_a", "  Agreed.  ")
    assert (said.text, said.sentences, said.turn) == ("Agreed.", 1, 1)
    assert engine.sentences('I can give you 2.5 cups. "Is that a deal?" Fine… ok') == 4


@pytest.mark.parametrize(
    ("reply", "rule"),
    [
        ("They agreed.", "not_one_json_object"),
        ("[1, 2]", "not_one_json_object"),
        (verdict()[:-1] + ', "notes": "x"}', "unknown_key"),
        (json.dumps({"agreement_reached": False, "allocation_type": "none"}), "missing_key"),
        (verdict(agreement_reached="no"), "agreement_not_boolean"),
        (verdict(allocation_type="compromise"), "unknown_allocation_type"),
        (verdict(allocation=" "), "empty_text"),
        (verdict(rationale=3), "empty_text"),
        (verdict(confidence=1.5), "confidence_out_of_range"),
        (verdict(confidence=True), "confidence_out_of_range"),
        (verdict(confidence="0.9"), "confidence_out_of_range"),
        (verdict(agreement_reached=True), "inconsistent_verdict"),
        (verdict(allocation_type="distributive"), "inconsistent_verdict"),
    ],
)
def test_verdict_rules(reply, rule):
    g = game()
    s = g.apply(g.start(0, None), "party_a", g.parse(g.start(0, None), "party_a", "Hello there. I need juice."))
    with pytest.raises(RuleError) as err:
        g.parse(s, "observer", reply)
    assert err.value.rule == rule
    seen = g.repair_message(s, "observer", err.value)
    assert seen == (f"Your verdict was not accepted: {err.value} "
                    "Reply again with exactly one JSON object and nothing else.")


def test_a_fenced_verdict_is_read():
    g = game()
    s = g.apply(g.start(0, None), "party_a", g.parse(g.start(0, None), "party_a", "Hi. I need juice."))
    v = g.parse(s, "observer", f"```json\n{verdict(confidence=1)}\n```")
    assert (v.turn, v.allocation_type, v.confidence) == (1, "none", 1.0)


def test_observer_agreement_closes_the_game_else_the_turn_limit():
    g = game("orange", "game.max_turns=2")
    s = g.start(0, None)
    s = g.apply(s, "party_a", g.parse(s, "party_a", "Take the peel. I keep the juice?"))
    judged = verdict(agreement_reached=True, allocation_type="integrative_full")
    agreed = g.apply(s, "observer", g.parse(s, "observer", judged))
    assert agreed.ended.status == Status.AGREEMENT and g.to_move(agreed) is None
    s = g.apply(s, "observer", g.parse(s, "observer", verdict()))
    s = g.apply(s, "party_b", g.parse(s, "party_b", "No. I want it all."))
    assert g.to_move(s) == "observer"  # the last message is judged before the limit closes the game
    s = g.apply(s, "observer", g.parse(s, "observer", verdict()))
    assert (s.ended.status, s.ended.reason, g.to_move(s)) == (Status.NO_AGREEMENT, "turn_limit", None)
    out = g.outcome(s)
    assert (out.allocation_type, out.party_turns, out.turns_to_agreement) == ("none", 2, None)


# --- failures ------------------------------------------------------------------------------

def test_observer_failure_is_a_technical_error_after_bounded_retries():
    record = replay_transcript(ReplayFile.model_validate_json((DATA / "freetext_observer_failure.json").read_text()))
    out = record.outcome
    assert (out.status, out.known, out.reason, out.scored.failed_role) == (
        "TECHNICAL_ERROR", False, "observer_failure", "observer")
    assert out.failure is not None and out.failure.kind == "unreadable_instrument"
    observer_calls = [c for c in record.calls if c.role == "observer"]
    assert len(observer_calls) == 1 + 2  # max_repairs re-asks, then it stops
    assert [c.rule for c in observer_calls] == ["not_one_json_object", "empty_text", "inconsistent_verdict"]
    assert observer_calls[0].response_text == "Party A wants the pack for a power bank; no proposal yet."
    assert out.scored.allocation_type is None and out.scored.agreement_reached is None


def test_a_party_breaking_the_format_is_a_format_failure():
    g = game()
    empty = "   "  # the only party rule with the hard word limit off
    record = run(g, dict.fromkeys(g.roles, ReplayAgent(deque([empty] * 3))))
    out = record.outcome
    assert (out.status, out.known, out.scored.failed_role, out.calls_attempted) == (
        "FORMAT_FAILURE", True, "party_a", 3)
    assert out.scored.allocation_type is None


# --- privacy -------------------------------------------------------------------------------

class Watched:
    """An agent that keeps every prompt it is sent, for checks on what each role saw."""

    def __init__(self, agent, seen: list, role: str) -> None:
        self.agent, self.seen, self.role = agent, seen, role

    async def act(self, prompt, call_id):
        self.seen.append((self.role, prompt))
        return await self.agent.act(prompt, call_id)


@pytest.mark.parametrize("name", ["orange", "battery"])
def test_briefs_stay_private_and_no_prompt_names_a_model(name):
    g = game(name)
    names = {m["name"] for m in MODELS.values()}
    briefs = {r: (prompts.brief(g.config, r), g.config.parties[r].situation) for r in g.config.parties}
    seen: list = []
    for pairing in EXPECTED:
        run(g, {role: Watched(agent, seen, role) for role, agent in scripted(g, pairing).items()})
    assert {role for role, _ in seen} == {"party_a", "party_b", "observer"}
    for role, prompt in seen:
        text = prompt.system + "".join(m.content for m in prompt.messages)
        assert not any(n in text for n in names), (role, text)
        for owner, private in briefs.items():
            if owner != role:
                assert not any(p in text for p in private), (role, owner)
        if role == "observer":
            assert prompt.system == prompts.observer_instructions(g.config)
            assert prompt.json_schema == prompts.VERDICT_SCHEMA
        else:
            assert prompt.system == briefs[role][0] and prompt.json_schema is None


def test_the_other_party_never_sees_a_repair():
    g = game()
    agent = ReplayAgent(deque(["", "Hi. I need the juice.", verdict(), "Hello. I need the peel.", verdict()]))
    record = run(g, dict.fromkeys(g.roles, agent))
    b = next(c for c in record.calls if c.role == "party_b")
    assert [m["content"] for m in b.request["messages"]] == ["Hi. I need the juice."]


# --- strategies and metrics ----------------------------------------------------------------

def test_strategies_recognize_only_this_family():
    g = game()
    s = g.start(0, None)
    assert strategy.recognizes(g.prompt(s, "party_a").system)
    assert strategy.recognizes(g.prompt(s, "observer").system)
    others = [f for name, f in families().items() if name != "freetext"]
    assert not any(f.strategy.recognizes(g.prompt(s, r).system) for f in others for r in g.roles)
    with pytest.raises(ValidationError, match="style"):  # checked when a sweep is resolved, and again here
        strategy.respond(g.prompt(s, "party_a").system, [], {"style": "sly"})


def test_the_talker_reads_a_repaired_prompt_as_the_turn_it_repairs():
    g = game()
    s = g.start(0, None)
    s = g.apply(s, "party_a", g.parse(s, "party_a", "What I need is the orange juice, for tonight. What do you need?"))
    p = g.prompt(s, "party_b")
    with pytest.raises(RuleError) as err:
        g.parse(s, "party_b", "  ")
    fixed = p.repaired("  ", g.repair_message(s, "party_b", err.value))
    as_dicts = [[m.model_dump() for m in q.messages] for q in (p, fixed)]
    replies = {strategy.respond(p.system, m, {}) for m in as_dicts}
    assert replies == {"Then we can both get what we need. Here is my proposal: you take all of the orange juice "
                       "and I take all of the peel. Do we agree?"}
    hard = strategy.respond(p.system, as_dicts[0], {"kind": "boulware"})  # as the simulated provider asks
    assert hard.endswith("I take the whole orange.")


@pytest.mark.parametrize(("pairing", "expected"), EXPECTED.items())
def test_scripted_pairings_reach_each_allocation_type(pairing, expected):
    for name in ("orange", "battery"):
        g = game(name)
        record = run(g, scripted(g, pairing))
        out = record.outcome
        assert (out.status, out.scored.allocation_type, out.scored.party_turns) == expected
        assert out.repairs_used == 0
        figures = metrics.per_game(record_config(record), record)
        assert figures["allocation_type"] == expected[1]
        assert figures["agreement"] is (expected[0] == "AGREEMENT")
        assert figures["turns"] == expected[2]
        assert figures["turns_to_agreement"] == (expected[2] if expected[0] == "AGREEMENT" else None)
        assert figures["integrative"] is expected[1].startswith("integrative")
        assert figures[f"is_{expected[1]}"] == 1.0
        assert 0 < figures["observer_confidence"] <= 1
        assert {k for k in figures if k.endswith("_questions")} == {"party_a_questions", "party_b_questions"}


def test_per_game_of_an_unknown_game_is_unscored():
    record = replay_transcript(ReplayFile.model_validate_json((DATA / "freetext_observer_failure.json").read_text()))
    figures = metrics.per_game(record_config(record), record)
    assert figures == {
        "agreement": None, "allocation_type": None, "integrative": None,
        "is_integrative_full": None, "is_integrative_partial": None, "is_distributive": None,
        "is_lopsided": None, "is_none": None, "turns": 1, "turns_to_agreement": None,
        "observer_confidence": None, "observer_invalid": 3, "party_a_questions": 1,
    }


def test_per_turn_pairs_each_message_with_its_verdict():
    record = replay_transcript(ReplayFile.model_validate_json((DATA / "freetext_replay.json").read_text()))
    rows = metrics.per_turn(record_config(record), record)
    assert [(r["party_turn"], r["role"], r["question"], r["allocation_type"]) for r in rows] == [
        (1, "party_a", True, "none"), (2, "party_b", True, "none"),
        (3, "party_a", True, "none"), (4, "party_b", False, "integrative_full")]
    assert [r["sentences"] for r in rows] == [4, 6, 3, 2]  # party B's six sentences were taken, not repaired
    figures = metrics.per_game(record_config(record), record)
    assert (figures["party_a_questions"], figures["party_b_questions"], figures["is_integrative_full"]) == (2, 1, 1.0)


# --- replay and sweep (subprocesses) -------------------------------------------------------

def test_replay_rescores_a_recorded_orange_game():
    done = subprocess.run(
        [sys.executable, "-m", "bargain_ray.replay", str(DATA / "freetext_replay.json")],
        capture_output=True, text=True, check=True, cwd=ROOT, timeout=120,
    )
    out = json.loads(done.stdout)
    assert (out["status"], out["reason"]) == ("AGREEMENT", "observer_agreement")
    assert out["allocation_type"] == "integrative_full"
    assert (out["party_turns"], out["turns_to_agreement"], out["verdicts"]) == (4, 4, 4)
    assert (out["calls_attempted"], out["repairs_used"], out["observer_confidence"]) == (9, 1, 0.97)
    assert [(i["role"], i["rule"]) for i in out["invalid_attempts"]] == [("observer", "not_one_json_object")]
    assert "unused_replies" not in out


def test_freetext_demo_sweep(ray_session, tmp_path):
    assert main(["+grid=freetext_demo", f"run.dir={tmp_path}", "run.progress=false", "run.report=false"]) == 0
    games = pl.read_parquet(tmp_path / "games.parquet")
    assert games.height == 24 and games["known"].all()
    for row in games.iter_rows(named=True):
        status, kind, turns = EXPECTED[row["pairing"]]
        assert (row["status"], row["allocation_type"], row["party_turns"]) == (status, kind, turns), row["unit_id"]
    assert games.filter(pl.col("pairing") == "IIR")["turns_to_agreement"].to_list() == [3.0] * 4
    turns = pl.read_parquet(tmp_path / "turns.parquet")
    verdicts = turns.filter(pl.col("action") == "VERDICT")
    assert verdicts.height == int(games["party_turns"].sum())
    calls = pl.read_parquet(tmp_path / "calls.parquet")
    observed = calls.filter(pl.col("role") == "observer")["response_text"].to_list()
    assert len(observed) == verdicts.height
    assert all(set(json.loads(t)) == set(engine.VERDICT_KEYS) for t in observed)


def test_the_rule_observer_reads_the_recorded_game_as_its_observer_did():
    g = game()
    spec = json.loads((DATA / "freetext_replay.json").read_text())
    party = deque(spec["replies"][i] for i in (0, 2, 4, 6))  # the party messages
    agents = dict.fromkeys(g.config.parties, ReplayAgent(party)) | {
        "observer": StrategyAgent("rule-observer", {}, "freetext")}
    out = run(g, agents).outcome
    assert (out.status, out.scored.allocation_type, out.scored.turns_to_agreement) == ("AGREEMENT", "integrative_full", 4)
    assert out.scored.allocation == (
        'Party A proposed "Then you could take all of the peel and I\'ll take all of the juice." and Party B agreed.')
