"""``served_by``: the upstream provider that answered each call, as an OpenRouter-style router reports it.

Real openai/anthropic SDKs over real HTTP to the simulated provider, which names the upstream provider
in a top-level ``provider`` field of its OpenAI-style replies when ``served_by`` names the model.
"""

from __future__ import annotations

import asyncio

from helpers import game_config

from bargain_ray.agents.llm import LLMAgent
from bargain_ray.config import ModelConfig
from bargain_ray.core.unit import Unit
from bargain_ray.games import load_game
from bargain_ray.play.loop import play
from bargain_ray.providers import make_client
from bargain_ray.providers.routing import SimProvider
from bargain_ray.providers.sim import SimServer, SimSettings
from bargain_ray.store.rows import record_rows, rows_frame

FAST = {"max_attempts": 2, "initial_s": 0.001, "max_s": 0.01, "timeout_s": 5.0}
ROUTED = {"sim-seller": "Together", "sim-buyer": "Anthropic"}


def client(url: str, name: str, api: str):
    model = ModelConfig.model_validate({"name": name, "provider": "sim", "retry": FAST, "max_tokens": 512})
    return make_client(model, SimProvider(settings={"base_url": url, "apis": {name: api}}))


def test_each_call_records_the_provider_that_answered_it():
    async def ask(url: str) -> dict[str, str | None]:
        game = load_game(game_config("tickets"))
        prompt = game.prompt(game.start(0, "buyer"), "buyer")
        out = {}
        for name, api in (("sim-seller", "openai"), ("sim-plain", "openai"), ("sim-buyer", "anthropic")):
            c = client(url, name, api)
            try:
                out[name] = (await c.complete(prompt, "k01")).served_by
            finally:
                await c.close()
        return out

    with SimServer(SimSettings(served_by=ROUTED)) as url:
        served = asyncio.run(ask(url))
    # named by the router; a model the router names no upstream for has none; the Messages API has no such field
    assert served == {"sim-seller": "Together", "sim-plain": None, "sim-buyer": None}


def test_the_call_rows_and_turn_rows_carry_served_by():
    """A whole game through the OpenAI SDK: every call row and every turn row names who served it."""
    routed = {"sim-seller": "Together", "sim-buyer": "DeepInfra"}

    async def game_record(url: str):
        game = load_game(game_config("tickets"))
        clients = {role: client(url, f"sim-{role}", "openai") for role in game.roles}
        try:
            agents = {role: LLMAgent(c) for role, c in clients.items()}
            return await play(game, agents, Unit.for_replay("tickets", "multi_issue", first_speaker="seller", unit_id="u-served"))
        finally:
            for c in clients.values():
                await c.close()

    with SimServer(SimSettings(served_by=routed, strategies={"sim-seller": "linear", "sim-buyer": "linear"})) as url:
        record = asyncio.run(game_record(url))
    assert record.outcome.known and len(record.calls) >= 2
    assert {(c.role, c.served_by) for c in record.calls} == {("seller", "Together"), ("buyer", "DeepInfra")}
    rows = record_rows(record)
    calls, turns = rows_frame("calls", rows["calls"]), rows_frame("turns", rows["turns"])
    assert calls["served_by"].to_list() == [routed[f"sim-{r}"] for r in calls["role"].to_list()]
    assert turns.height == len(record.turns)
    assert turns["served_by"].to_list() == [routed[f"sim-{r}"] for r in turns["role"].to_list()]
