"""The simulated provider over raw HTTP: limits with real 429s and headers, faults, strategies."""

from __future__ import annotations

import json
import re
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime

import pytest
from helpers import game_config

from bargain_ray.clients.headers import duration_s
from bargain_ray.games import load_game
from bargain_ray.providers.sim import LogEntry, SimServer, SimSettings


def opening(role: str = "seller") -> tuple[str, str]:
    game = load_game(game_config("tickets"))
    prompt = game.prompt(game.start(0, role), role)
    return prompt.system, prompt.messages[0].content


def post(url: str, body: dict) -> tuple[int, dict[str, str], bytes]:
    req = urllib.request.Request(url, json.dumps(body).encode(), {"content-type": "application/json", "x-api-key": "k"})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), err.read()


def anthropic_body(model: str = "claude-opus-5-5") -> dict:
    system, user = opening()
    return {"model": model, "system": system, "messages": [{"role": "user", "content": user}], "max_tokens": 4096}


def openai_body(model: str = "gpt-x") -> dict:
    system, user = opening()
    return {"model": model, "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}]}


def test_the_log_is_models_and_sim_log_serves_each_entry_with_the_keys_it_was_given() -> None:
    """Issue 17: the server keeps its log as ``LogEntry`` models; ``GET /sim/log`` serves the JSON it always did: an
    answered request, a refused one (its announced wait) and a batched one each with their own keys, no nulls for a
    key an entry never had."""
    server = SimServer(SimSettings(limits={"requests_per_minute": 60}))
    with server as url:
        post(f"{url}/v1/messages", anthropic_body())
        refused = post(f"{url}/v1/messages", anthropic_body())[0]
        batch = post(f"{url}/v1/messages/batches", {"requests": [{"custom_id": "c0", "params": anthropic_body()}]})[0]
        with urllib.request.urlopen(f"{url}/sim/log", timeout=10) as resp:
            served = json.load(resp)
    log = server.log
    assert (refused, batch) == (429, 200) and all(isinstance(e, LogEntry) for e in log)
    base = {"request_id", "api", "model", "arrived", "status", "fault", "input_tokens", "output_tokens", "key_sha"}
    assert [set(e) for e in served] == [base | {"call_id", "left", "done"}, base | {"call_id", "announced_at", "wait_until"},
                                        base | {"batch_id", "custom_id"}]
    assert [e["status"] for e in served] == [200, 429, 200] and served[0]["call_id"] is None and served[0]["left"] == 0  # a bucket of one
    assert served[2]["custom_id"] == "c0" and served[2]["batch_id"].startswith("msgbatch_sim")
    assert [LogEntry.model_validate(e) for e in served] == log


def test_answers_both_apis_as_the_configured_strategy() -> None:
    server = SimServer(SimSettings(strategies={"claude-opus-5-5": "boulware"}))
    with server as url:
        status, headers, data = post(f"{url}/v1/messages", anthropic_body())
        assert status == 200 and headers["request-id"].startswith("req_sim_")
        reply = json.loads(json.loads(data)["content"][0]["text"])
        assert reply["action"] == "OFFER"
        status, headers, data = post(f"{url}/v1/chat/completions", openai_body())
        body = json.loads(data)
        assert status == 200 and body["id"] == headers["x-request-id"]
        assert json.loads(body["choices"][0]["message"]["content"])["action"] == "OFFER"
    assert [e.status for e in server.log] == [200, 200]
    assert SimSettings().strategy("any-model") == SimSettings().strategy("any-model")


@pytest.mark.parametrize(("path", "body", "prefix"), [
    ("/v1/messages", anthropic_body(), "anthropic-ratelimit-requests-"),
    ("/v1/chat/completions", openai_body(), "x-ratelimit-"),
])
def test_request_limit_answers_429_with_retry_after_and_headers(path: str, body: dict, prefix: str) -> None:
    with SimServer(SimSettings(limits={"requests_per_minute": 60, "burst_s": 1.0})) as url:
        first = post(url + path, body)
        second = post(url + path, body)
    assert first[0] == 200 and second[0] == 429
    assert 0 < float(second[1]["retry-after"]) <= 1.0
    assert any(k.lower().startswith(prefix) for k in first[1])


def test_faults_are_what_they_say() -> None:
    with SimServer(SimSettings(faults={"overlong": 1.0})) as url:
        _, _, data = post(f"{url}/v1/messages", anthropic_body())
    message = json.loads(json.loads(data)["content"][0]["text"])["message"]
    assert len(message.split()) > 80
    with SimServer(SimSettings(faults={"malformed": 1.0})) as url:
        status, _, data = post(f"{url}/v1/chat/completions", openai_body())
    assert status == 200
    with pytest.raises(ValueError):
        json.loads(data)
    server = SimServer(SimSettings(faults={"overloaded": 0.5, "error_5xx": 0.5}, seed=5))
    with server as url:
        statuses = [post(f"{url}/v1/messages", anthropic_body())[0] for _ in range(8)]
    assert set(statuses) <= {500, 503, 529} and 529 in statuses
    again = SimServer(SimSettings(faults={"overloaded": 0.5, "error_5xx": 0.5}, seed=5))
    with again as url:
        assert [post(f"{url}/v1/messages", anthropic_body())[0] for _ in range(8)] == statuses  # seeded


@pytest.mark.parametrize(("path", "body", "remaining", "reset"), [
    ("/v1/messages", anthropic_body(), "anthropic-ratelimit-requests-remaining", "anthropic-ratelimit-requests-reset"),
    ("/v1/chat/completions", openai_body(), "x-ratelimit-remaining-requests", "x-ratelimit-reset-requests"),
])
def test_announced_limits_only_429s_carry_no_retry_after(path: str, body: dict, remaining: str, reset: str) -> None:
    """The headers say what is left and when it resets (in each API's own format), and the log has the wait."""
    server = SimServer(SimSettings(limits={"requests_per_minute": 60, "retry_after": False}))
    with server as url:
        post(url + path, body)
        status, headers, _ = post(url + path, body)
    assert status == 429 and "retry-after" not in {k.lower() for k in headers}
    assert headers[remaining] == "0"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ" if "anthropic" in reset else r"\d+ms|\d+(\.\d+)?s", headers[reset])
    refused = server.log[1]
    assert refused.status == 429 and refused.wait_until > refused.announced_at >= refused.arrived


def test_openai_token_limit_counts_input_and_max_tokens() -> None:
    """OpenAI's token limit is one total that counts each request's max_tokens as it arrives."""
    server = SimServer(SimSettings(limits={"tokens_per_minute": 60_000, "burst_s": 10.0}))  # a 10 000-token bucket
    with server as url:
        _, first, _ = post(f"{url}/v1/chat/completions", openai_body() | {"max_completion_tokens": 100})
        _, second, _ = post(f"{url}/v1/chat/completions", openai_body() | {"max_completion_tokens": 5000})
    spent = int(first["x-ratelimit-remaining-tokens"]) - int(second["x-ratelimit-remaining-tokens"])
    assert first["x-ratelimit-limit-tokens"] == "60000" and "x-ratelimit-limit-requests" not in first
    assert spent == pytest.approx(server.log[1].input_tokens + 5000, abs=300)  # refill between the two aside


@pytest.mark.parametrize(("path", "body"), [("/v1/messages", anthropic_body()), ("/v1/chat/completions", openai_body())])
def test_a_bucket_of_the_whole_minute_reports_its_level_and_full_replenishment(path: str, body: dict) -> None:
    """As the providers document theirs: the bucket holds the minute's limit, ``remaining`` is its level and the
    reset the time until it is full again; a reply announces no wait (only a 429's is logged as one)."""
    server = SimServer(SimSettings(limits={"requests_per_minute": 60, "burst_s": 60.0}))  # 1 a second, 60 held
    with server as url:
        sent = [post(url + path, body) for _ in range(3)]
    anthropic = path == "/v1/messages"
    left = [int(h["anthropic-ratelimit-requests-remaining" if anthropic else "x-ratelimit-remaining-requests"])
            for _, h, _ in sent]
    assert [s for s, _, _ in sent] == [200, 200, 200] and left == [59, 58, 57]
    reset = sent[-1][1]["anthropic-ratelimit-requests-reset" if anthropic else "x-ratelimit-reset-requests"]
    if anthropic:
        ahead = datetime.fromisoformat(reset).timestamp() - server.log[-1].arrived
        assert 2 <= ahead <= 4.5  # 3 s of refill to full, rounded up to the whole second
    else:
        assert 2 <= duration_s(reset) <= 3.0
    assert all(e.wait_until is None for e in server.log)


@pytest.mark.parametrize(("report_at", "first_left"), [("response", 58), ("arrival", 59)])
def test_headers_read_the_buckets_as_answered_or_as_admitted(report_at: str, first_left: int) -> None:
    """A request answered after another was admitted: read at the response, its report counts that one too."""
    settings = SimSettings(limits={"requests_per_minute": 6, "burst_s": 600.0, "report_at": report_at},
                           latency={"median_s": 0.6})  # 60 held, a refill every 10 s: none during the test
    server = SimServer(settings)
    with server as url, ThreadPoolExecutor(2) as pool:
        first = pool.submit(post, f"{url}/v1/chat/completions", openai_body())
        while not server.log or server.log[0].left is None:  # the first admitted (and held 0.6 s) before the second
            assert not first.done(), "the first request was answered before the test saw it admitted"
            time.sleep(0.005)
        second = pool.submit(post, f"{url}/v1/chat/completions", openai_body())
        left = [int(f.result()[1]["x-ratelimit-remaining-requests"]) for f in (first, second)]
    assert left == [first_left, 58]
