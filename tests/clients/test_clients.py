"""Model clients: real SDKs over real HTTP to the simulated provider on 127.0.0.1."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import socket
import time
import urllib.error
import urllib.request

import anthropic
import pytest
import yaml
from aiohttp import web
from helpers import CONF, DATA, game_config, serve_app

from bargain_ray.clients import http_client
from bargain_ray.config import ModelConfig
from bargain_ray.core.errors import TechnicalFailure
from bargain_ray.core.prompt import Prompt
from bargain_ray.games import load_game
from bargain_ray.providers import ClientPool, key_env_vars, make_client
from bargain_ray.providers.routing import DefaultProvider, SimProvider
from bargain_ray.providers.sim import SimServer, SimSettings, requests_inside_waits

SECRET = "sk-test-SECRET123"
FAST = {"max_attempts": 3, "initial_s": 0.001, "max_s": 0.01, "timeout_s": 1.5}


def model_conf(name: str, **extra: object) -> ModelConfig:
    data = yaml.safe_load((CONF / "model" / f"{name}.yaml").read_text())
    return ModelConfig.model_validate(data | extra)


def opening_prompt(role: str = "buyer") -> Prompt:
    game = load_game(game_config("tickets"))
    return game.prompt(game.start(0, role), role)


def sim_client(url: str, api: str, keys: dict[str, str] | None = None, **model: object):
    base = ModelConfig.model_validate({"name": f"sim-{api}", "provider": "sim", "retry": FAST, **model})
    return make_client(base, SimProvider(settings={"base_url": url, "apis": {base.name: api}}), keys)


def keyed_client(url: str, api: str, key: str, **model: object):
    """A client of the sim under a key of its own (the sweep always sends the sim a placeholder), so two
    clients are two limiter keys that share one server limit."""
    base = ModelConfig.model_validate({"name": f"sim-{api}", "provider": "sim", "retry": FAST, **model})
    return http_client(base, "sim", api, key, url if api == "anthropic" else f"{url}/v1")


def test_anthropic_request_is_seed000_request_context() -> None:
    """The body sent is seed 000's recorded request, key for key, in its order."""
    seed = json.loads((DATA / "seed000.json").read_text())["requests"][0]
    model = model_conf("claude-haiku-5-5").model_copy(update={"provider": "sim"})
    client = make_client(model, SimProvider(settings={"base_url": "http://x"}))
    body = client.body(opening_prompt("buyer"))
    assert body == seed
    assert list(body) == ["model", "system", "messages", "max_tokens", "thinking", "output_config", "service_tier"]


def test_openai_request_carries_system_params_and_schema() -> None:
    model = model_conf("gpt-5-mini", structured_output=True).model_copy(update={"provider": "sim"})
    client = make_client(model, SimProvider(settings={"base_url": "http://x", "apis": {model.name: "openai"}}))
    prompt = opening_prompt().model_copy(update={"json_schema": {"type": "object"}})
    body = client.body(prompt)
    assert body["messages"][0] == {"role": "system", "content": prompt.system}
    assert body["max_completion_tokens"] == 4096 and body["reasoning_effort"] == "low"
    assert body["response_format"]["json_schema"]["schema"] == {"type": "object"}


def test_anthropic_request_carries_the_schema_as_the_sdk_converts_it() -> None:
    """structured_output on: output_config.format holds the schema as ``anthropic.transform_schema`` makes it (what
    the API does not constrain, such as bounds, moved into descriptions), beside the configured effort."""
    model = model_conf("claude-haiku-5-5", structured_output=True).model_copy(update={"provider": "sim"})
    client = make_client(model, SimProvider(settings={"base_url": "http://x"}))
    schema = {"type": "object", "additionalProperties": False, "required": ["x"],
              "properties": {"x": {"type": "number", "minimum": 0, "maximum": 5, "multipleOf": 0.5}}}
    body = client.body(opening_prompt().model_copy(update={"json_schema": schema}))
    assert body["output_config"] == {**model.params["output_config"],
                                     "format": {"type": "json_schema", "schema": anthropic.transform_schema(schema)}}
    assert "minimum" not in body["output_config"]["format"]["schema"]["properties"]["x"]


def complete_all(server: SimServer, api: str, n: int, **model: object) -> list:
    """``n`` concurrent calls through a fresh client; replies or the exceptions raised."""

    async def run() -> list:
        client = sim_client(server.base_url, api, **model)
        try:
            prompts = [opening_prompt() for _ in range(n)]
            return await asyncio.gather(*(client.complete(p, f"c{i}") for i, p in enumerate(prompts)),
                                        return_exceptions=True)
        finally:
            await client.close()

    return asyncio.run(run())


@pytest.mark.parametrize("api", ["anthropic", "openai"])
def test_storm_every_attempt_accounted_for(api: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Under 5xx, 529, timeouts, drops and malformed bodies each call ends as a reply or a technical
    failure, and the attempts recorded are exactly the requests the server saw, no key in sight."""
    monkeypatch.setenv("ANTHROPIC_API_KEY" if api == "anthropic" else "OPENAI_API_KEY", SECRET)
    faults = {"error_5xx": 0.12, "overloaded": 0.12, "timeout": 0.06, "drop": 0.08, "malformed": 0.12}
    server = SimServer(SimSettings(seed=3, faults=faults, timeout_sleep_s=2.0))
    with server:
        results = complete_all(server, api, 40)
    log = server.log
    replies = [r for r in results if not isinstance(r, BaseException)]
    failures = [r for r in results if isinstance(r, BaseException)]
    assert all(isinstance(f, TechnicalFailure) and f.reply is not None for f in failures)
    assert replies and failures  # the storm is strong enough to exhaust some calls' attempts
    assert {f.reply.attempts for f in failures} == {FAST["max_attempts"]}
    recorded = [r.attempts for r in replies] + [f.reply.attempts for f in failures]
    assert sum(recorded) == len(log)
    served = [e.request_id for e in log if e.status == 200 and e.fault != "malformed"]
    assert sorted(r.request_id for r in replies) == sorted(served)
    for r in replies:
        assert r.stop_reason in ("end_turn", "stop") and r.text.startswith("{")
        assert len(r.attempt_errors) == r.attempts - 1
    text = json.dumps([r.model_dump(mode="json") for r in replies] + [[str(f), f.reply.model_dump(mode="json")] for f in failures])
    assert SECRET not in text and "SECRET123" not in text
    # timeouts and drops are recorded as attempt errors, of whichever calls they met (which calls run out of
    # attempts depends on the order requests arrive in, the machine's: ~60 requests, p(no timeout or drop) ~1e-4)
    kinds = " ".join(e for r in [*replies, *(f.reply for f in failures)] for e in r.attempt_errors)
    assert "Timeout" in kinds or "Connection" in kinds


def test_refusal_is_a_reply_not_a_retry() -> None:
    server = SimServer(SimSettings(faults={"refusal": 1.0}))
    with server:
        anthropic_reply, = complete_all(server, "anthropic", 1)
        openai_reply, = complete_all(server, "openai", 1)
    assert anthropic_reply.stop_reason == "refusal" and anthropic_reply.text == "" and anthropic_reply.attempts == 1
    assert openai_reply.stop_reason == "refusal" and openai_reply.attempts == 1
    assert len(server.log) == 2


def hammer(url: str, body: dict, seconds: float) -> int:
    """Another process spending the same model's limit under its own key, as fast as it is answered."""
    path = "/v1/messages" if "system" in body else "/v1/chat/completions"
    data = json.dumps(body).encode()
    deadline, sent = time.monotonic() + seconds, 0
    while time.monotonic() < deadline:
        request = urllib.request.Request(url + path, data, {"content-type": "application/json", "x-api-key": "other"})
        with contextlib.suppress(urllib.error.HTTPError):
            urllib.request.urlopen(request, timeout=10).close()
        sent += 1
        time.sleep(0.02)
    return sent


@pytest.mark.parametrize(("api", "retry_after"), [("anthropic", True), ("anthropic", False), ("openai", False)])
def test_no_request_inside_an_announced_wait(api: str, retry_after: bool) -> None:
    """The client is told no limit, so it learns it from the headers; another key spends the same
    model's limit meanwhile, so 429s come (with retry-after, or with only the headers' resets).
    Neither key of ours sends a request inside a wait announced to it (by a 429, or by a reply
    that reports a limit spent), and every call ends answered."""
    server = SimServer(SimSettings(limits={"requests_per_minute": 240, "retry_after": retry_after}))

    async def run() -> list:
        clients = [keyed_client(server.base_url, api, key, limits={"max_in_flight": 1},
                                retry={**FAST, "max_attempts": 30}) for key in ("key-a", "key-b")]
        try:
            other = asyncio.to_thread(hammer, server.base_url, clients[0].body(opening_prompt()), 2.0)
            calls = [c.complete(opening_prompt(), f"c{i}-{n}") for i, c in enumerate(clients) for n in range(8)]
            return (await asyncio.gather(other, *calls, return_exceptions=True))[1:]
        finally:
            for client in clients:
                await client.close()

    with server:
        results = asyncio.run(run())
    ours = [e for e in server.log if e.key_sha != _sha("other")]
    assert all(not isinstance(r, BaseException) for r in results), results
    assert sum(e.status == 429 for e in ours) > 0 and len({e.key_sha for e in ours}) == 2
    assert all(e.wait_until > e.announced_at for e in ours if e.status == 429)
    assert requests_inside_waits(ours, announced_by=(429, 200)) == 0
    assert sum(r.attempts for r in results) == len(ours)


def _sha(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()[:12]


def test_missing_key_is_a_technical_failure_and_keys_forward_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    client = ClientPool(DefaultProvider()).get(model_conf("claude-opus-5-5"))
    with pytest.raises(TechnicalFailure, match="ANTHROPIC_API_KEY is not set"):
        asyncio.run(client.complete(opening_prompt(), "k"))
    from bargain_ray.design import load_config

    sweep = load_config("c3_smoke")
    assert key_env_vars(sweep) == {}
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    assert key_env_vars(sweep) == {"ANTHROPIC_API_KEY": SECRET}


@pytest.mark.parametrize(("name", "api"), [("claude-haiku-5-5", "anthropic"), ("gpt-5-mini", "openai")])
def test_wire_body_is_the_recorded_request(name: str, api: str) -> None:
    """What the SDK puts on the wire is exactly the request recorded, and no credential is in it."""
    seen: list[dict] = []

    async def echo(request: web.Request) -> web.Response:
        seen.append(await request.json())
        if api == "anthropic":
            return web.json_response({"id": "m", "type": "message", "role": "assistant", "model": "v1",
                                      "content": [{"type": "text", "text": "hi"}], "stop_reason": "end_turn",
                                      "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}})
        return web.json_response({"id": "c", "object": "chat.completion", "created": 0, "model": "v1", "choices": [
            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "hi"}}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})

    async def run() -> object:
        app = web.Application()
        app.router.add_post("/v1/messages", echo)
        app.router.add_post("/v1/chat/completions", echo)
        runner = web.AppRunner(app)
        await runner.setup()
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        await web.SockSite(runner, sock).start()
        port = sock.getsockname()[1]
        model = model_conf(name).model_copy(update={"provider": "sim"})
        settings = {"base_url": f"http://127.0.0.1:{port}", "apis": {model.name: api}}
        client = make_client(model, SimProvider(settings=settings))
        try:
            return await client.complete(opening_prompt(), "k01")
        finally:
            await client.close()
            await runner.cleanup()

    reply = asyncio.run(run())
    assert seen == [reply.request] and reply.text == "hi" and reply.model_version == "v1"


@pytest.mark.parametrize("sdk", ["anthropic", "openai"])
def test_a_failed_call_is_classified_by_what_its_last_error_says(sdk: str) -> None:
    """The summary groups unknown games by the failure's kind, never by searching its text; each API's registry
    entry names its SDK's classification."""
    import importlib

    import httpx2 as httpx

    from bargain_ray.clients import registry
    from bargain_ray.clients.retry import MalformedReply
    from bargain_ray.core.errors import FailureKind

    module = importlib.import_module(sdk)
    errors = registry.get(sdk).sdk_errors()
    request = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")

    def status(code: int) -> BaseException:
        return module.APIStatusError("x", response=httpx.Response(code, request=request), body=None)

    assert errors.kind(status(429)) is FailureKind.RATE_LIMITED and errors.transient(status(429))
    assert errors.kind(status(401)) is FailureKind.AUTH and not errors.transient(status(401))
    assert errors.kind(status(529)) is FailureKind.SERVER_ERROR and errors.transient(status(529))
    assert errors.kind(status(400)) is FailureKind.BAD_REQUEST and not errors.transient(status(400))
    assert errors.kind(module.APITimeoutError(request=request)) is FailureKind.TIMEOUT
    assert errors.kind(module.APIConnectionError(request=request)) is FailureKind.CONNECTION
    assert errors.transient(module.APIConnectionError(request=request))
    assert errors.kind(MalformedReply("cut")) is FailureKind.MALFORMED_REPLY and errors.transient(MalformedReply("cut"))
    assert errors.kind(RuntimeError("?")) is FailureKind.OTHER and not errors.transient(RuntimeError("?"))


NEWER = {  # reply bodies with values the pinned SDKs' types do not know: a new block type, stop and finish reasons
    "anthropic": {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-next",
                  "content": [{"type": "a_block_type_from_next_year", "data": "x"}, {"type": "text", "text": "Hi."}],
                  "stop_reason": "a_new_stop_reason", "stop_sequence": None,
                  "usage": {"input_tokens": 11, "output_tokens": 3}},
    "openai": {"id": "c1", "object": "chat.completion", "created": 1, "model": "gpt-next",
               "choices": [{"index": 0, "finish_reason": "a_new_finish_reason",
                            "message": {"role": "assistant", "content": "Hi."}}],
               "usage": {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14}},
}


@pytest.mark.parametrize("api", ["anthropic", "openai"])
def test_a_reply_newer_than_the_pinned_sdk_is_read_as_the_sdk_reads_it(api: str) -> None:
    """A reply is validated as the SDK's own type in one pass; one that does not validate (a value newer than the
    SDK) takes the SDK's own lenient parse and keeps what it can, as before: its text, reason and tokens."""
    from anthropic.types import Message
    from openai.types.chat import ChatCompletion

    from bargain_ray.clients.http import validated

    kind = Message if api == "anthropic" else ChatCompletion
    assert validated(kind, json.dumps(NEWER[api]).encode()) is None, "this body must need the SDK's own parse"

    async def reply(request: web.Request) -> web.Response:
        return web.json_response(NEWER[api])

    app = web.Application()
    app.router.add_post("/v1/messages" if api == "anthropic" else "/v1/chat/completions", reply)
    async def ask(url: str):
        client = keyed_client(url, api, SECRET)
        try:
            return await client.complete(opening_prompt(), "k01")
        finally:
            await client.close()

    with serve_app(app) as url:
        got = asyncio.run(ask(url))
    assert (got.text, got.usage.input_tokens, got.usage.output_tokens) == ("Hi.", 11, 3)
    assert got.stop_reason == ("a_new_stop_reason" if api == "anthropic" else "a_new_finish_reason")
