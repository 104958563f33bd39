"""A crash of bargain_ray's own code is reported as ours: never as a provider's server error, never retried, never a
page of tracebacks. Before, a simulated provider's strategy that raised (a stake weight of 0 divided by zero) was
answered by aiohttp with a 500 and its traceback, retried as a provider's 5xx, and the summary blamed "server errors
(5xx)"; a strategy agent that raised took its game runner down."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from helpers import game_config

from bargain_ray.__main__ import main
from bargain_ray.agents.strategy import StrategyAgent
from bargain_ray.core.errors import FailureKind
from bargain_ray.core.status import ExitCode, Status
from bargain_ray.core.unit import Unit
from bargain_ray.games import load_game, strategy_reply
from bargain_ray.play.loop import play
from bargain_ray.providers.sim import SimServer, SimSettings

ZERO = {"kind": "linear", "exponent": 0}
"""A concession exponent of 0, which the config refuses: handed to a strategy past that check, its parameters fail to
validate (a real crash, in our code, whose message spans lines and is raised inside pydantic)."""


def test_a_strategy_agent_that_crashes_ends_its_game_unknown_as_ours():
    game = load_game(game_config("tickets"))
    agents = {role: StrategyAgent("linear", ZERO, "multi_issue") for role in game.roles}
    record = asyncio.run(play(game, agents, Unit.for_replay("tickets", "multi_issue", 1, None, unit_id="u")))
    failure = record.outcome.failure
    assert record.outcome.status == Status.TECHNICAL_ERROR and failure.kind == FailureKind.INTERNAL
    assert failure.detail.startswith("strategy agent linear crashed: ValidationError: 1 validation error for Params at ")
    assert " at games/multi_issue/strategy.py:" in failure.detail and "not the provider's" in failure.detail
    assert "\n" not in failure.detail and "site-packages" not in failure.detail  # one line, no machine's path


def test_a_crash_in_the_simulated_provider_is_ours_once_per_call_and_one_line(
        ray_session, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]):
    monkeypatch.setattr("bargain_ray.providers.sim.server.strategy_reply",
                        lambda system, messages, params: strategy_reply(system, messages, params | ZERO))
    server = SimServer(SimSettings())
    with server as url:
        code = main(["+grid=c3_smoke", "provider=sim", f"run.dir={tmp_path}", f"provider.settings.base_url={url}",
                     "run.progress=false", "run.report=false"])
    out, err = capfd.readouterr()
    assert code == ExitCode.UNKNOWN_GAMES
    assert [e.status for e in server.log] == [500] * 16  # each game's first call, asked once: a bug is not retried
    assert "16 games unknown: 16 crashes of bargain_ray's own code" in out and "5xx" not in out
    crash = next(line for line in out.splitlines() if line.startswith("bargain_ray's own code crashed: "))
    assert "the simulated provider's strategy for " in crash and "ValidationError" in crash
    assert " at games/multi_issue/strategy.py:" in crash
    assert "Traceback" not in out + err and "Error handling request" not in err

