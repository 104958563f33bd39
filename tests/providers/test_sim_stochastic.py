"""The simulated provider's stochastic replies (``reply_noise``; ``misread``, the free-text observer's): drawn around
the strategy, reproducibly.

Replicate games of a C3 cell send the provider the same text word for word, so without noise they play
alike (a rehearsal's CIs have no width); the noise is seeded by the settings' seed, the call id the client
sends and the request's text, so games drawn apart come out the same on every run, in any order.
"""

from __future__ import annotations

import asyncio
import json
import re
import urllib.request
from html import unescape as html_unescape
from pathlib import Path
from typing import Any

from helpers import game_config

from bargain_ray.__main__ import main
from bargain_ray.analysis.view import Follower
from bargain_ray.clients import http_client
from bargain_ray.clients.headers import CALL_ID_HEADER
from bargain_ray.config import ModelConfig
from bargain_ray.core.prompt import Prompt
from bargain_ray.design import ResolvedSweep, load_config, units
from bargain_ray.execution.worker import GameRunner
from bargain_ray.games import load_game, strategy_reply
from bargain_ray.games.freetext.engine import Said, State
from bargain_ray.providers.sim import SimServer, SimSettings


def anthropic_body() -> dict[str, Any]:
    """The seller's request at turn 2 of a C3 game (the opening offer is the same whatever the concession)."""
    game = load_game(game_config("tickets"))
    state = game.start(0, "buyer")
    ask = game.prompt(state, "buyer")
    opening = strategy_reply(ask.system, [m.model_dump() for m in ask.messages], {"kind": "linear"})
    state = game.apply(state, "buyer", game.parse(state, "buyer", opening))
    prompt = game.prompt(state, "seller")
    return {"model": "claude-opus-5-5", "system": prompt.system, "max_tokens": 4096,
            "messages": [m.model_dump() for m in prompt.messages]}


def reply_to(url: str, body: dict[str, Any], call: str | None) -> str:
    headers = {"content-type": "application/json", "x-api-key": "k", **({CALL_ID_HEADER: call} if call else {})}
    req = urllib.request.Request(f"{url}/v1/messages", json.dumps(body).encode(), headers)
    with urllib.request.urlopen(req, timeout=10) as resp:
        return json.loads(resp.read())["content"][0]["text"]


def replies(settings: SimSettings, calls: list[str]) -> dict[str, str]:
    body = anthropic_body()
    with SimServer(settings) as url:
        return {call: reply_to(url, body, call) for call in calls}


CALLS = [f"negotiation-x-b{b:02d}-p001-OO-a1-k01" for b in range(1, 13)]


def test_no_noise_answers_the_same_text_alike_whatever_the_call() -> None:
    assert len(set(replies(SimSettings(), CALLS).values())) == 1


def test_noise_draws_apart_by_call_and_seed_and_repeats_in_any_order() -> None:
    noisy = SimSettings(reply_noise=1.0, seed=3)
    first = replies(noisy, CALLS)
    assert len(set(first.values())) > 1  # the same text, drawn apart by the call id
    assert replies(noisy, CALLS[::-1]) == first  # another order, another server: the same draws
    assert replies(noisy.model_copy(update={"seed": 4}), CALLS) != first


def test_the_call_id_goes_to_the_simulated_provider_only() -> None:
    """Clients name each call to the sim (its replies' seed); a client of a real provider sends no such header."""
    model = ModelConfig(name="claude-opus-5-5", provider="sim", retry={"max_attempts": 1})
    prompt = Prompt(system=anthropic_body()["system"], messages=tuple(anthropic_body()["messages"]))

    async def call(url: str, label: str) -> None:
        client = http_client(model, label, "anthropic", "k", url)
        try:
            await client.complete(prompt, f"{label}-k01")
        finally:
            await client.close()

    server = SimServer(SimSettings())
    with server as url:
        asyncio.run(call(url, "sim"))
        asyncio.run(call(url, "anthropic"))
    assert [e.call_id for e in server.log] == ["sim-k01", None]


def c3_units(url: str, blocks: int) -> tuple[ResolvedSweep, list[Any]]:
    overrides = [f"grid.blocks={blocks}", "grid.designs.0.pairings=[OO]", "provider=sim",
                 f"provider.settings.base_url={url}", "run.progress=false"]
    sweep = load_config("c3_smoke", overrides)
    return sweep, [u for u in units(sweep, "00000000") if u.assignment == 1]


def play_cell(noise: float, blocks: int = 6) -> list[str]:
    """The outcome of each replicate game of one C3 cell (OO, assignment 1), played through the real SDK."""

    async def run(sweep: ResolvedSweep, cell: list[Any]) -> list[str]:
        runner = GameRunner(sweep.model_dump(mode="json"))
        try:
            records = [await runner.play(unit) for unit in cell]
        finally:
            await runner.close()
        return [json.dumps([r.outcome.agreement, len(r.turns), r.turns[-1].fields.written()], sort_keys=True) for r in records]

    with SimServer(SimSettings(reply_noise=noise, seed=9)) as url:
        sweep, cell = c3_units(url, blocks)
        assert len(cell) == blocks
        return asyncio.run(run(sweep, cell))


def test_replicate_games_play_alike_without_noise_and_apart_with_it_the_same_each_run() -> None:
    assert len(set(play_cell(0.0))) == 1  # what gives a rehearsal's CIs no width
    noisy = play_cell(1.0)
    assert len(set(noisy)) > 1
    assert play_cell(1.0) == noisy


def observer_body() -> dict[str, Any]:
    """The orange observer's request after a split by parts was proposed and accepted (read: integrative_full)."""
    said = ["What I need is the juice. Here is my proposal: you take all of the peel and I take all of the juice.",
            "Agreed, I accept your proposal. Thank you, that settles it."]
    transcript = tuple(Said(turn=i + 1, role=role, text=text, sentences=2, words=len(text.split()))
                       for i, (role, text) in enumerate(zip(("party_a", "party_b"), said, strict=True)))
    prompt = load_game(game_config("orange")).prompt(State(first_speaker="party_a", transcript=transcript), "observer")
    return {"model": "claude-opus-5-5", "system": prompt.system, "max_tokens": 4096,
            "messages": [m.model_dump() for m in prompt.messages]}


def test_the_observer_misreads_at_its_chance_reproducibly_and_never_as_it_read() -> None:
    """``misread`` (ours): a verdict drawn among the other allocation types, per call, the same on every run."""
    body = observer_body()
    calls = [f"negotiation-orange-b01-p{p:02d}-OOO-a1-k{k:02d}" for p in range(20) for k in range(10)]
    with SimServer(SimSettings()) as url:
        exact = {json.loads(reply_to(url, body, call))["allocation_type"] for call in calls[:20]}
    assert exact == {"integrative_full"}
    with SimServer(SimSettings(misread=0.3, seed=5)) as url:
        verdicts = {call: json.loads(reply_to(url, body, call)) for call in calls}
        again = {call: json.loads(reply_to(url, body, call)) for call in reversed(calls[:30])}
    assert all(verdicts[call] == again[call] for call in again)  # the same call draws the same verdict
    misread = [v for v in verdicts.values() if v["allocation_type"] != "integrative_full"]
    assert 40 <= len(misread) <= 80  # 200 reads at 0.3: 60 expected, sd 6.5
    assert all(v["agreement_reached"] == (v["allocation_type"] != "none") for v in misread)
    assert len({v["allocation_type"] for v in misread}) == 4  # drawn among the four other types


def test_the_rehearsal_note_states_the_reply_noise_in_force(ray_session, tmp_path: Path) -> None:
    """With reply_noise=0.3 the report, the card and the view said the replies were deterministic and the intervals
    of zero width, beside intervals of non-zero width."""
    folder = tmp_path / "noisy"
    assert main(["+grid=c3_smoke", "provider=sim", "provider.settings.reply_noise=0.3", f"run.dir={folder}",
                 "run.progress=false"]) == 0
    html = (folder / "report.html").read_text()
    note = html_unescape(re.search(r'<p class="sim" id="rehearsal">(.*?)</p>', html)[1])
    card = (folder / "dataset" / "README.md").read_text().split("## Limitations")[1].split("\n## ")[0]
    view = Follower(folder).snapshot().rehearsal
    for said in (note, card, view):
        assert said is not None and "reply_noise=0.3, each reply was drawn around its model's strategy" in said
        assert "deterministic" not in said and "zero width" not in said
    assert "intervals have zero width" not in html
