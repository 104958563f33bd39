"""The no-communication condition: messages suppressed for every side, every other word identical, any grid
crosses it, and the paired differences show talk vs silence on common seeds."""

from __future__ import annotations

import asyncio
import difflib
import json
import re

import polars as pl
import pytest
from helpers import game_config, play_replies
from pydantic import ValidationError

from bargain_ray.__main__ import main
from bargain_ray.agents.strategy import StrategyAgent
from bargain_ray.analysis import provenance
from bargain_ray.config import compose_dict
from bargain_ray.core.unit import Unit
from bargain_ray.games import load_game, strategy_reply
from bargain_ray.play.loop import play

SILENT = compose_dict("condition/silent")["condition"]["game"]
GAMES = ["tickets", "bargaining", "scorable6"]
MARK = "ZEBRA-42"


def sentences(text: str) -> list[str]:
    return [part for part in re.split(r"(?<=[.!?])\s+|\n", text) if part.strip()]


def pair(name: str):
    config = game_config(name)
    return load_game(config), load_game(config | SILENT)


@pytest.mark.parametrize("name", GAMES)
def test_silence_changes_only_the_words_about_the_message(name):
    talk, silent = pair(name)
    said, quiet = talk.texts(), silent.texts()
    assert said.keys() == quiet.keys()
    changed = [k for k in said if said[k].text != quiet[k].text]
    assert any(k.startswith("brief:") for k in changed)
    for key in changed:
        a, b = sentences(said[key].text), sentences(quiet[key].text)
        edits = [" ".join(a[i1:i2] + b[j1:j2]) for op, i1, i2, j1, j2 in
                 difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes() if op != "equal"]
        assert edits and all(re.search(r"message|valuation", e, re.I) for e in edits), (key, edits)
        assert quiet[key].provenance.ours and "no-communication" in (quiet[key].provenance.reason or "")


def bargaining_reply(action="offer", offer=60):
    return json.dumps({"stated_valuation": 33, "offer": offer, "action": action, "message": f"{MARK} my cost is 33",
                       "reasoning_private": "r"})


def ticket_reply(action="OFFER", offer_id=None):
    terms = {"unit_price_usd": 80, "cancellation_fee_pct": 50, "name_change_notice_hours": 48}
    return json.dumps({"action": action, "offer_id": offer_id, "terms": terms if action == "OFFER" else None,
                       "message": f"{MARK} hello"})


def scorable_reply(action="propose"):
    deal = {f"issue{i}": "opt0" for i in range(5)}
    return "```json\n" + json.dumps({"scratchpad": "s", "message": f"{MARK} hi", "action": action, "deal": deal}) + "\n```"


REPLIES = {
    "bargaining": [bargaining_reply(), bargaining_reply(offer=40), bargaining_reply("accept", None)],
    "tickets": [ticket_reply(), ticket_reply("ACCEPT", "O1")],
    "scorable6": [scorable_reply()] + ['{"action": "accept", "offer_id": "P1", "message": "ok"}'] * 5,
}


@pytest.mark.parametrize("name", GAMES)
def test_under_silence_no_side_ever_reads_what_another_wrote(name):
    spoken = []
    for config, heard in ((game_config(name), True), (game_config(name) | SILENT, False)):
        record = play_replies(config | ({"max_rounds": 3} if name == "bargaining" else {}), REPLIES[name])
        assert record.outcome.known and record.outcome.invalid_attempts == []
        later = [c for c in record.calls if c.turn > 1]
        read = any(MARK in json.dumps(c.request) for c in later)
        assert read is heard, (name, heard)
        spoken.append([t.fields.message for t in record.turns])
        if name == "bargaining":  # the claim too, measured alike; only what the other side saw differs
            assert [t.fields.stated_valuation for t in record.turns] == [33] * 3
            assert record.metrics["seller_disclosure"] == 1.0
            shown = [(t.fields.public.message, t.fields.public.stated_valuation) for t in record.turns]
            assert all(m.startswith(MARK) and v == 33 for m, v in shown) if heard else shown == [("", None)] * 3
    assert spoken[0] == spoken[1] and MARK in spoken[1][0]  # what was said is recorded in both arms


@pytest.mark.parametrize("name", GAMES)
def test_strategies_and_the_simulated_providers_replies_stay_valid_under_silence(name):
    _, silent = pair(name)
    agents = {role: StrategyAgent("linear", {"kind": "linear"}, silent.config.family) for role in silent.roles}
    record = asyncio.run(play(silent, agents, Unit.for_replay(name, silent.config.family, 3, unit_id="u")))
    assert record.outcome.known and record.outcome.repairs_used == 0
    state = silent.start(3, None)
    role = silent.to_move(state)
    prompt = silent.prompt(state, role)
    text = strategy_reply(prompt.system, [m.model_dump() for m in prompt.messages], {"kind": "boulware"})
    silent.parse(state, role, text)  # the simulated provider answers with this: a legal reply


def test_free_text_refuses_the_condition():
    with pytest.raises(ValidationError, match="messages"):
        load_game(game_config("orange") | SILENT)


LABELS = {"unit_id", "condition", "cell", "position", "unit_hash", "started_at", "ended_at"}
"""The per-game columns that name a game or time it: the only ones the two arms of a block may differ in."""


def test_talk_independent_strategies_show_no_talk_minus_silence_difference_on_any_metric(tmp_path, ray_session):
    """The demo's strategies never read a message: every figure of the silent arm equals the talking arm's, block by
    block, so every talk - silence difference is 0 (a difference the recording creates would show here)."""
    assert main(["+grid=talk_silence_demo", f"run.dir={tmp_path}", "run.progress=false"]) == 0
    games = pl.read_parquet(tmp_path / "games.parquet")
    assert games.height == 40 and games["known"].all()
    assert set(zip(games["game"], games["condition"], strict=True)) == {
        ("tickets", "C3"), ("tickets", "silent"), ("bargaining", "default"), ("bargaining", "silent"),
        ("scorable6", "public"), ("scorable6", "silent")}
    block = ["game", "pairing", "assignment", "block"]
    talk, silent = (games.filter(arm).sort(block) for arm in (pl.col("condition") != "silent",
                                                            pl.col("condition") == "silent"))
    assert talk.select(block).equals(silent.select(block))
    differ = [c for c in games.columns if c not in LABELS and not talk[c].equals(silent[c], null_equal=True)]
    assert differ == []  # every metric defined in both arms or in neither, and equal
    turns = pl.read_parquet(tmp_path / "turns.parquet").join(games.select("unit_id", "condition", *block),
                                                             on="unit_id")
    in_talk, in_silence = (turns.filter(arm).sort([*block, "turn"]) for arm in (pl.col("condition") != "silent",
                                                                                  pl.col("condition") == "silent"))
    assert in_talk["message"].equals(in_silence["message"])  # what was said is recorded in both arms
    spoken = in_talk.filter(pl.col("game") == "bargaining")["message"].str.len_chars().sum()
    seen = {arm: t.filter(pl.col("game") == "bargaining")["public_message"].str.len_chars().sum()
            for arm, t in (("talk", in_talk), ("silence", in_silence))}
    assert spoken > 0 and seen == {"talk": spoken, "silence": 0}  # what silence removes: what the other side saw
    scored = turns.filter(pl.col("turn_scored"))
    assert scored["leakage"].null_count() == 0 and (scored["leakage"] > 0).any()
    assert {("bargaining", True), ("bargaining", False)} <= {
        (g, c == "silent") for g, c in scored.filter(pl.col("disclosure") > 0).select("game", "condition").iter_rows()}
    paired = pl.read_parquet(tmp_path / "dataset" / "metrics" / "paired_differences.parquet")
    condition = paired.filter(pl.col("factor") == "condition")
    assert {(g, a, b) for g, a, b in condition.select("game", "a", "b").unique().iter_rows()} == {
        ("tickets", "C3", "silent"), ("bargaining", "default", "silent"), ("scorable6", "public", "silent")}
    assert (condition["n_seeds"] == 4).any() and condition.height > 50  # common seeds: every block plays both
    assert condition.filter((pl.col("mean_diff") != 0) | (pl.col("ci_low") != 0) | (pl.col("ci_high") != 0)).height == 0
    page = (tmp_path / "report.html").read_text()  # a silent game's transcript marks each message as never read
    shown = [part.split('"', 1) for part in page.split('<details class="game" id="')[1:]]
    marked = {unit: 'class="undelivered"' in part for unit, part in shown}
    condition_of = dict(games.select("unit_id", "condition").iter_rows())
    assert marked and all(flag == (condition_of[u] == "silent") for u, flag in marked.items())


@pytest.mark.parametrize("name", GAMES)
def test_the_provenance_table_lists_every_sentence_silence_drops_or_adds_as_ours(name):
    talk, silent = pair(name)
    assert provenance.silence_changes(talk, name, "C3") == []
    [item] = provenance.silence_changes(silent, name, "silent")
    assert item.provenance.ours and not item.provenance.seeds
    changed = [k for k in talk.texts() if talk.texts()[k].text != silent.texts()[k].text]
    assert changed and all(f"{k} drops" in item.what or f"{k} adds" in item.what for k in changed)
    table = provenance.markdown(provenance.game_items(silent, name, "silent"))
    assert f"| {name} / silent | text | no-talk wording | {item.what}" in table
    if name == "bargaining":  # the talking brief lets a claim be false; the silent brief does not say so
        assert "brief:seller drops “- \"message\" is free text for the buyer, at most 300 characters.”" in item.what
        assert "drops “The buyer sees it; it need not be true.”" in item.what
