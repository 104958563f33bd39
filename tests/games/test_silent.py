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
    for config, heard in ((game_config(name), True), (game_config(name) | SILENT, False)):
        record = play_replies(config | ({"max_rounds": 3} if name == "bargaining" else {}), REPLIES[name])
        assert record.outcome.known and record.outcome.invalid_attempts == []
        later = [c for c in record.calls if c.turn > 1]
        read = any(MARK in json.dumps(c.request) for c in later)
        assert read is heard, (name, heard)
        spoken = [t.fields.message for t in record.turns]
        assert all(spoken) if heard else not any(spoken)  # a closed channel records nothing said
    if name == "bargaining":
        assert [t.fields.stated_valuation for t in record.turns] == [None] * 3  # no claim delivered either
        assert record.metrics["seller_disclosure"] == 0.0


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


def test_the_demo_grid_crosses_talk_and_silence_through_the_pipeline(tmp_path, ray_session):
    assert main(["+grid=talk_silence_demo", f"run.dir={tmp_path}", "run.progress=false"]) == 0
    games = pl.read_parquet(tmp_path / "games.parquet")
    assert games.height == 40 and games["known"].all()
    assert set(zip(games["game"], games["condition"], strict=True)) == {
        ("tickets", "C3"), ("tickets", "silent"), ("bargaining", "default"), ("bargaining", "silent"),
        ("scorable6", "public"), ("scorable6", "silent")}
    turns = pl.read_parquet(tmp_path / "turns.parquet").join(games.select("unit_id", "condition"), on="unit_id")
    assert (turns.filter(pl.col("condition") == "silent")["message"].fill_null("") == "").all()
    assert (turns.filter(pl.col("condition") != "silent")["message"].fill_null("") != "").any()
    paired = pl.read_parquet(tmp_path / "dataset" / "metrics" / "paired_differences.parquet")
    talk = paired.filter(pl.col("factor") == "condition")
    assert {(g, a, b) for g, a, b in talk.select("game", "a", "b").unique().iter_rows()} == {
        ("tickets", "C3", "silent"), ("bargaining", "default", "silent"), ("scorable6", "public", "silent")}
    assert (talk["n_seeds"] == 4).any()  # common seeds: every block plays both conditions
    disclosure = talk.filter((pl.col("game") == "bargaining") & (pl.col("metric").str.ends_with("disclosure")))
    assert disclosure.height and (disclosure["mean_diff"] > 0).any()  # a claim is disclosed only with talk
    assert (tmp_path / "report.html").exists()
    # leakage lands in the tables per message and per game and role, for each family; none under silence
    scored = turns.filter(pl.col("turn_scored")).join(games.select("unit_id", "game"), on="unit_id")
    assert set(scored.filter(pl.col("leakage").is_not_null())["game"]) == {"tickets", "bargaining", "scorable6"}
    assert scored.filter(pl.col("condition") == "silent")["leakage"].null_count() == scored.filter(
        pl.col("condition") == "silent").height
    assert {"seller_leakage", "buyer_leakage", "Avery_leakage", "leakage_any"} <= set(games.columns)
    truthful = games.filter((pl.col("game") == "bargaining") & (pl.col("condition") == "default"))
    assert truthful["seller_leakage"].max() > 0  # the linear strategy states its true cost
