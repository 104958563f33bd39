"""What a provider says is bounded on its one way in: token counts no call can have fail the call (never priced, never
retried), a wait announced beyond the longest the runner waits fails the call at once instead of hanging it, and a
reply that trickles in is cut at ``retry.timeout_s`` however slowly its bytes come. Real SDKs over real HTTP to
stand-in servers on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from aiohttp import ClientSession, web
from helpers import serve_app

from bargain_ray.__main__ import main
from bargain_ray.clients import http_client
from bargain_ray.config import ModelConfig
from bargain_ray.core.errors import FailureKind, TechnicalFailure
from bargain_ray.core.prompt import Message, Prompt
from bargain_ray.core.records import Reply
from bargain_ray.core.status import ExitCode
from bargain_ray.providers.sim import SimServer, SimSettings

SECRET = "sk-test-SECRET123"
FAST = {"max_attempts": 3, "initial_s": 0.001, "max_s": 0.01, "timeout_s": 1.5}
PATHS = {"anthropic": "/v1/messages", "openai": "/v1/chat/completions"}
GIVE_UP_S = 60.0
"""How long a call may take here before the test calls it hung (the code before these bounds waited for ever)."""


def reply_body(api: str, input_tokens: int = 11, output_tokens: int = 3) -> dict[str, Any]:
    if api == "anthropic":
        return {"id": "msg_1", "type": "message", "role": "assistant", "model": "m-1", "stop_reason": "end_turn",
                "stop_sequence": None, "content": [{"type": "text", "text": "Hi."}],
                "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens}}
    return {"id": "c1", "object": "chat.completion", "created": 1, "model": "m-1",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "Hi."}}],
            "usage": {"prompt_tokens": input_tokens, "completion_tokens": output_tokens,
                      "total_tokens": input_tokens + output_tokens}}


def ask(app: web.Application, api: str, calls: int = 1, **retry: float) -> list[Reply | BaseException]:
    """``calls`` calls one after another through a real client of ``api`` to ``app``: each reply, or what it raised."""
    model = ModelConfig.model_validate({"name": "m", "provider": api, "retry": {**FAST, **retry},
                                        "price": {"input": 1.0, "output": 5.0}})

    async def run(url: str) -> list[Reply | BaseException]:
        client = http_client(model, api, api, SECRET, url if api == "anthropic" else f"{url}/v1")
        prompt = Prompt(system="s", messages=(Message(role="user", content="hello"),))
        out: list[Reply | BaseException] = []
        try:
            for n in range(calls):
                try:
                    out.append(await asyncio.wait_for(client.complete(prompt, f"k{n}"), GIVE_UP_S))
                except (TechnicalFailure, TimeoutError) as exc:
                    out.append(exc)
        finally:
            await client.close()
        return out

    with serve_app(app) as url:
        return asyncio.run(run(url))


def answering(api: str, status: int, body: dict[str, Any], headers: dict[str, str], hits: list[int]) -> web.Application:
    async def answer(request: web.Request) -> web.Response:
        hits.append(1)
        return web.json_response(body, status=status, headers=headers)

    app = web.Application()
    app.router.add_post(PATHS[api], answer)
    return app


@pytest.mark.parametrize("api", ["anthropic", "openai"])
@pytest.mark.parametrize("tokens", [10**30, -500])
def test_a_token_count_no_call_can_have_fails_the_call_unpriced_unretried(api: str, tokens: int) -> None:
    """``10**30`` input tokens broke the tables (polars i128 -> i64) and ``-500`` credited the budget ($-0.0005 a call
    here): now the call fails as an unreadable reply naming the field, with no cost, after its one attempt."""
    hits: list[int] = []
    failed, = ask(answering(api, 200, reply_body(api, input_tokens=tokens), {}, hits), api)
    assert isinstance(failed, TechnicalFailure), failed
    assert failed.failure.kind is FailureKind.MALFORMED_REPLY, failed.failure
    assert f"usage.input_tokens={tokens} is no token count of one call" in failed.failure.detail
    assert "\n" not in failed.failure.detail and len(hits) == 1
    assert failed.reply is not None and failed.reply.cost_usd == 0.0 and failed.reply.text == ""


@pytest.mark.parametrize(("status", "headers", "named"), [
    (429, {"retry-after": "1e9"}, "retry-after=1e9"),
    (429, {"retry-after": "inf"}, "retry-after=inf"),
    (429, {"anthropic-ratelimit-requests-reset": "2999-01-01T00:00:00Z", "anthropic-ratelimit-requests-remaining": "0"},
     "anthropic-ratelimit-requests-reset=2999-01-01T00:00:00Z"),
    (429, {"retry-after": "0.01", "anthropic-ratelimit-requests-limit": "1e-300"},
     "anthropic-ratelimit-requests-limit=1e-300"),
    (529, {"retry-after": "1e9"}, "retry-after=1e9"),
])
def test_a_wait_announced_beyond_the_longest_fails_the_call_at_once(status: int, headers: dict[str, str],
                                                                     named: str) -> None:
    """The code before waited as told: 1e9 seconds, for ever, until 2999, or paced by a limit of 1e-300 a minute."""
    hits: list[int] = []
    error = {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}
    failed, = ask(answering("anthropic", status, error, headers, hits), "anthropic")
    assert isinstance(failed, TechnicalFailure), failed
    kind = FailureKind.RATE_LIMITED if status == 429 else FailureKind.SERVER_ERROR
    assert failed.failure.kind is kind and failed.failure.http_status == status
    assert f"{named} asks for a wait of more than 600 s" in failed.failure.detail, failed.failure.detail
    assert "\n" not in failed.failure.detail and len(hits) == 1


def test_a_success_announcing_an_absurd_limit_is_kept_and_paces_nothing() -> None:
    """A 200 whose headers announce 1e-300 requests a minute: its reply is kept (it was answered and paid), the limit
    is not learned, and the next call goes at once (the code before paced it by the limit: for ever)."""
    hits: list[int] = []
    headers = {"anthropic-ratelimit-requests-limit": "1e-300", "anthropic-ratelimit-requests-remaining": "0",
               "retry-after": "1e9"}
    first, second = ask(answering("anthropic", 200, reply_body("anthropic"), headers, hits), "anthropic", calls=2)
    assert isinstance(first, Reply) and isinstance(second, Reply), (first, second)
    assert first.text == second.text == "Hi." and first.usage.input_tokens == 11 and len(hits) == 2


def trickling(hits: list[int]) -> web.Application:
    """Answers 200 with a whole, valid reply's headers at once, then its body a byte every 0.2 s (about a minute)."""
    async def trickle(request: web.Request) -> web.StreamResponse:
        hits.append(1)
        body = json.dumps(reply_body("anthropic")).encode()
        response = web.StreamResponse(headers={"content-type": "application/json"})
        response.content_length = len(body)
        await response.prepare(request)
        for i in range(len(body)):
            await response.write(body[i:i + 1])
            await asyncio.sleep(0.2)
        return response

    app = web.Application()
    app.router.add_post(PATHS["anthropic"], trickle)
    return app


def test_a_reply_trickling_in_is_cut_at_the_attempts_deadline() -> None:
    """``retry.timeout_s`` bounds each attempt from the request to the reply's last byte: a reply trickling a byte
    every 0.2 s never trips the SDK's per-read timeout of 1 s (the code before waited the minute it takes), here it
    is cut at 1 s, retried (a timeout is transient) and cut again."""
    hits: list[int] = []
    failed, = ask(trickling(hits), "anthropic", max_attempts=2, timeout_s=1.0)
    assert isinstance(failed, TechnicalFailure), failed
    assert failed.failure.kind is FailureKind.TIMEOUT, failed.failure
    assert "no whole reply within retry.timeout_s=1 s" in failed.failure.detail and len(hits) == 2


def usage_rewriting(sim: str, usage: dict[str, dict[str, int]]) -> web.Application:
    """In front of the simulated provider: each reply of a model named in ``usage`` reports those token counts."""
    async def forward(request: web.Request) -> web.Response:
        async with ClientSession() as session, session.post(sim + request.path, data=await request.read(),
                                                            headers={"content-type": "application/json"}) as upstream:
            body = await upstream.json()
        if upstream.status == 200 and body["model"] in usage:
            body["usage"] |= usage[body["model"]]
        return web.json_response(body, status=upstream.status)

    app = web.Application()
    app.router.add_post(PATHS["anthropic"], forward)
    return app


def test_a_sweep_whose_replies_report_absurd_usage_ends_with_its_tables_and_spends_nothing(
        tmp_path: Path, ray_session: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """10**30 input tokens in every reply of one model, -1,000,000 output tokens in the other's: the code before
    ended in a polars traceback writing the tables (i128 -> i64), every rerun the same, and priced the negative
    count as a credit. Now each such call fails, its game is unknown, the tables are written and nothing is spent."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-key")
    usage = {"claude-opus-5-5": {"input_tokens": 10**30}, "claude-haiku-5-5": {"output_tokens": -10**6}}
    folder = tmp_path / "sweep"
    with SimServer(SimSettings()) as sim, serve_app(usage_rewriting(sim, usage)) as url:
        code = main(["+grid=c3_smoke", f"run.dir={folder}", f"models.O.base_url={url}", f"models.H.base_url={url}",
                     "run.progress=false", "run.workers=1", "models.O.retry.initial_s=0", "models.H.retry.initial_s=0"])
    out = capsys.readouterr().out
    games = pl.read_parquet(folder / "games.parquet")
    calls = pl.read_parquet(folder / "calls.parquet")
    assert code == ExitCode.UNKNOWN_GAMES, out[-2000:]
    assert len(games) == 16 and not games["known"].any() and games["cost_usd"].sum() == 0.0
    assert set(calls["status"]) == {"error"} and calls["cost_usd"].sum() == 0.0 and calls["attempts"].max() == 1
    assert calls["input_tokens"].max() == 0 and calls["output_tokens"].min() == 0
    errors = "\n".join(calls["error"])
    assert f"usage.input_tokens={10**30} is no token count" in errors and "usage.output_tokens=-1000000" in errors
