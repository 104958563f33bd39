"""Any text is safe: replies carrying a lone surrogate, NUL, ESC and 10 MB of text are played by the
real loop, journaled, replayed, tabled and reported without error, and the page shows no raw control."""

from __future__ import annotations

import asyncio
import json

import polars as pl
import pytest
from folders import cli
from helpers import DATA, game_config, play_replies

from bargain_ray.analysis.report import build_report
from bargain_ray.config import ModelConfig
from bargain_ray.core.errors import TechnicalFailure
from bargain_ray.core.records import Reply
from bargain_ray.core.unit import Unit
from bargain_ray.design import load_config
from bargain_ray.execution.plan import describe
from bargain_ray.games import load_game
from bargain_ray.games.kit.replies import json_object
from bargain_ray.providers import make_client
from bargain_ray.providers.routing import SimProvider
from bargain_ray.providers.sim import SimServer, SimSettings
from bargain_ray.store import GameJournal, open_manifest, read_calls, write_tables
from bargain_ray.store.calls import CallEntry, CallJournal, calls_journal_path

BIG = 10_000_000


def hostile_replies(raw_surrogate: bool = True) -> list[str]:
    """The seed-002 replay with hostile text: an escaped lone surrogate, NUL and ESC in the first
    message; a raw lone surrogate in the second reply's text (or escaped, without ``raw_surrogate``);
    a 10 MB invalid reply before the third."""
    replies = json.loads((DATA / "bargaining_replay.json").read_text())["replies"]
    first = json.loads(replies[0])
    first["message"] = "lone \ud800 nul \x00 esc \x1b[31m bell \x07 end"
    second = json.loads(replies[1])
    second["message"] = "raw \udc00 surrogate"
    garbage = "\x00\x1b[2J" + "z" * BIG + ("\ud800" if raw_surrogate else "\\ud800")
    return [json.dumps(first), json.dumps(second, ensure_ascii=not raw_surrogate), garbage, *replies[2:]]


def test_hostile_text_is_played_journaled_tabled_and_reported(tmp_path):
    replies = hostile_replies()
    assert "\udc00" in replies[1] and "\\ud800" in replies[0]
    config = game_config("bargaining", prompt_variant="explicit_objective")
    plain = play_replies(config, json.loads((DATA / "bargaining_replay.json").read_text())["replies"], "seller", 1001)
    record = play_replies(config, replies, "seller", 1001)
    assert record.outcome.known, record.outcome.reason
    assert record.outcome.repairs_used == plain.outcome.repairs_used + 1
    assert record.outcome.agreement == plain.outcome.agreement

    open_manifest(tmp_path, describe(load_config("bargaining_demo"), "20261201"))
    journal = GameJournal(tmp_path)
    journal.append_many([record.model_copy(update={"unit": Unit.for_replay("bargaining", "bargaining", 1001,
                                                                           "seller", unit_id="u-text")})])
    journal.close()
    calls = CallJournal(str(calls_journal_path(tmp_path)))
    for c in record.calls:
        reply = Reply(text=c.response_text, **c.model_dump(include=set(Reply.model_fields) - {"text"}))
        calls.append(CallEntry(unit_id="u-open", call_id=c.call_id, prompt="p", reply=reply))
    calls.close()
    replayed = [e.reply.text for e in read_calls(tmp_path, skip=set())["u-open"]]
    assert replayed == [c.response_text for c in record.calls]

    assert write_tables(tmp_path)["calls"] == len(record.calls)
    turns = pl.read_parquet(tmp_path / "turns.parquet")
    assert turns["message"][0] == "lone \ufffd nul \x00 esc \x1b[31m bell \x07 end"
    texts = pl.read_parquet(tmp_path / "calls.parquet")["response_text"].to_list()
    assert any("raw \ufffd surrogate" in t for t in texts)
    big = texts.index("\x00\x1b[2J" + "z" * BIG + "\ufffd")
    requests = pl.read_parquet(tmp_path / "calls.parquet")["request"].to_list()
    assert "z" * BIG in requests[big + 1], "the repair request carried the 10 MB reply back"

    html = build_report(tmp_path).read_text(encoding="utf-8")
    assert "\x00" not in html and "\x1b" not in html and "\x07" not in html
    assert "nul \u2400 esc \u241b[31m bell \u2407 end" in html and "\u2400\u241b[2Jzzz" in html


def test_hostile_replies_replay_through_the_cli(tmp_path):
    """Escaped surrogates only: a raw one in a reply is spelled ``\\udc00`` in the file, which the replay
    CLI's pydantic JSON parser refuses as invalid JSON (left to the CLI's owner)."""
    replies = hostile_replies(raw_surrogate=False)
    spec = json.loads((DATA / "bargaining_replay.json").read_text()) | {"replies": replies}
    (tmp_path / "hostile.json").write_text(json.dumps(spec))
    out = cli("bargain_ray.replay", str(tmp_path / "hostile.json"))
    assert out.returncode == 0, out.stderr
    outcome = json.loads(out.stdout)
    assert outcome["known"] and outcome["calls_attempted"] == len(replies)


@pytest.mark.parametrize("api", ["anthropic", "openai"])
def test_hostile_text_sent_back_through_the_real_sdks_to_the_sim(api):
    """The next request carries the hostile reply back (a repair; the other side's message): once
    made whole it encodes through both SDKs; the raw text would not have (the failure this fixes)."""
    game = load_game(game_config("tickets"))
    opening = game.prompt(game.start(0, "buyer"), "buyer")
    hostile = Reply(provider="x", model="m", request={}, text='{"message": "raw \udc00"}').text
    shown = json_object('{"message": "escaped \\ud800"}')["message"]
    model = ModelConfig.model_validate({"name": f"sim-{api}", "provider": "sim", "retry": {"max_attempts": 1}})

    async def run(prompt) -> Reply:
        client = make_client(model, SimProvider(settings={"base_url": url,
                                                                          "apis": {model.name: api}}))
        try:
            return await client.complete(prompt, "k01")
        finally:
            await client.close()

    with SimServer(SimSettings()) as url:
        reply = asyncio.run(run(opening.repaired(hostile, shown)))
        assert reply.text and reply.stop_reason != "error"
        with pytest.raises(TechnicalFailure):
            asyncio.run(run(opening.repaired('{"message": "raw \udc00"}', "escaped \ud800")))
