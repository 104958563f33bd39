"""Price, cost and the token count before a call have one home (``config.pricing``): the client bills with it, the
budget reserves with it, the dry run estimates with it, the simulated provider counts with it."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

import bargain_ray
from bargain_ray.agents.llm import LLMAgent
from bargain_ray.config import Price
from bargain_ray.config.pricing import cost_usd, worst_case_usd
from bargain_ray.core.records import Usage
from bargain_ray.design import load_config, units
from bargain_ray.play.loop import play
from bargain_ray.play.probe import typical_calls
from bargain_ray.providers import make_client
from bargain_ray.providers.sim import SimServer

PACKAGE = Path(bargain_ray.__file__).parent


def test_cost_from_price_table() -> None:
    price = Price(input=5.0, output=25.0, cache_read=0.5, cache_write=6.25)
    usage = Usage(input_tokens=1000, output_tokens=200, cache_read_tokens=100, cache_write_tokens=10)
    assert cost_usd(usage, price, input_includes_cache=False) == pytest.approx((5000 + 5000 + 50 + 62.5) / 1e6)
    assert cost_usd(usage, price, input_includes_cache=True) == pytest.approx((4500 + 5000 + 50 + 62.5) / 1e6)


def test_no_other_module_does_price_or_token_arithmetic() -> None:
    """Dollars per million tokens and characters per token are computed in ``config/pricing.py`` only."""
    arithmetic = re.compile(r"/\s*1e6|/\s*1_000_000|//\s*4\b|\*\s*4\]")
    found = [f"{p.relative_to(PACKAGE)}:{n}" for p in PACKAGE.rglob("*.py") if p.name != "pricing.py"
             for n, line in enumerate(p.read_text().splitlines(), 1) if arithmetic.search(line.split("#")[0])]
    assert found == []


def test_the_estimate_counts_the_input_tokens_the_sim_bills_and_the_client_bills_at_the_price() -> None:
    """The dry run's typical game (linear strategy agents, measured) sends what the same game sends through the
    real clients to the simulated provider answering as linear agents: equal input tokens, call by call; each
    reply is billed ``cost_usd`` of its usage, within the budget's worst case."""
    linear = "{claude-opus-5-5: linear, claude-haiku-5-5: linear}"
    sweep = load_config("c3_smoke", ["provider=sim", f"provider.settings.strategies={linear}"])
    unit = next(u for u in units(sweep, "20260101") if u.pairing == "OH")
    game = sweep.game(unit.game, unit.condition)
    estimated = typical_calls(game, unit)
    with SimServer(sweep.provider.settings) as url:
        served = sweep.served_at(url)

        async def run():
            clients = {role: make_client(served.models[letter], served.provider)
                       for role, letter in unit.model_of_role.items()}
            try:
                return await play(game, {r: LLMAgent(c) for r, c in clients.items()}, unit)
            finally:
                for c in clients.values():
                    await c.close()

        record = asyncio.run(run())
    billed = {role: [c.usage.input_tokens for c in record.calls if c.role == role] for role in estimated}
    assert billed == estimated and sum(map(len, billed.values())) > 4
    for call in record.calls:
        model = served.models[unit.model_of_role[call.role]]
        assert call.cost_usd == cost_usd(call.usage, model.price) > 0
        assert call.cost_usd <= worst_case_usd(model, game.prompt(game.start(unit.seed, unit.first_speaker), call.role))
