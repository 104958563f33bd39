"""The sim's batch APIs through the real SDKs and the batch clients, over real HTTP; no Ray."""

from __future__ import annotations

import asyncio
import json

import anthropic
import openai
import pytest
import yaml
from helpers import CONF, game_config

from bargain_ray.clients import BatchedClient, BatchResult, BatchRoute, batch_client
from bargain_ray.config import ModelConfig
from bargain_ray.core.errors import TechnicalFailure
from bargain_ray.core.prompt import Prompt
from bargain_ray.games import load_game
from bargain_ray.providers import make_client
from bargain_ray.providers.routing import SimProvider
from bargain_ray.providers.sim import SimServer, SimSettings

FAST = {"max_attempts": 2, "initial_s": 0.001, "max_s": 0.01, "timeout_s": 5.0}


def prompts(n: int) -> list[Prompt]:
    game = load_game(game_config("tickets"))
    roles = ["buyer", "seller"]
    return [game.prompt(game.start(i, roles[i % 2]), roles[i % 2]) for i in range(n)]


def sim_client(url: str, api: str, name: str = "claude-opus-5-5"):
    data = yaml.safe_load((CONF / "model" / f"{name}.yaml").read_text()) | {"retry": FAST}
    model = ModelConfig.model_validate(data).model_copy(update={"provider": "sim"})
    return make_client(model, SimProvider(settings={"base_url": url, "apis": {model.name: api}}))


def online_text(url: str, api: str, prompt: Prompt) -> str:
    async def run() -> str:
        client = sim_client(url, api)
        try:
            return (await client.complete(prompt, "online")).text
        finally:
            await client.close()
    return asyncio.run(run())


OPEN = SimSettings(batch={"delay_s": 600.0})
"""A sim whose batches stay open for the whole test (what an open batch answers, and its cancel)."""
DONE = SimSettings(batch={"delay_s": 0.0})
"""A sim whose batches have ended by the time anyone asks (what an ended batch answers): no test waits on a clock."""


def anthropic_batch(client: anthropic.Anthropic, bodies: list[dict]) -> anthropic.types.messages.MessageBatch:
    """A batch of ``bodies`` created through the SDK, their custom ids ``c0``, ``c1``, …"""
    return client.messages.batches.create(requests=[{"custom_id": f"c{i}", "params": b} for i, b in enumerate(bodies)])


def test_anthropic_sdk_round_trip_answers_as_online() -> None:
    with SimServer(OPEN) as url:
        bodies = [sim_client(url, "anthropic").body(p) for p in prompts(3)]
        client = anthropic.Anthropic(api_key="k", base_url=url, max_retries=0)
        batch = anthropic_batch(client, bodies)
        assert batch.processing_status == "in_progress" and batch.request_counts.processing == 3
        assert client.messages.batches.retrieve(batch.id).results_url is None
        assert client.messages.batches.cancel(batch.id).processing_status == "ended"
        assert [r.result.type for r in client.messages.batches.results(batch.id)] == ["canceled"] * 3
    server = SimServer(DONE)
    with server as url:
        client = anthropic.Anthropic(api_key="k", base_url=url, max_retries=0)
        batch = anthropic_batch(client, bodies)
        ended = client.messages.batches.retrieve(batch.id)
        assert ended.processing_status == "ended" and ended.request_counts.succeeded == 3
        results = {r.custom_id: r.result for r in client.messages.batches.results(batch.id)}
        assert sorted(results) == ["c0", "c1", "c2"]
        for i, p in enumerate(prompts(3)):
            assert results[f"c{i}"].type == "succeeded"
            assert results[f"c{i}"].message.content[0].text == online_text(url, "anthropic", p)
    batched = [e for e in server.log if e.batch_id == batch.id]
    assert [(e.custom_id, e.status) for e in batched] == [("c0", 200), ("c1", 200), ("c2", 200)]
    assert all(e.key_sha for e in batched)


def openai_batch(client: openai.OpenAI, bodies: list[dict]) -> openai.types.Batch:
    """A batch of ``bodies`` created through the SDK (their file uploaded first), custom ids ``c0``, ``c1``, …"""
    lines = "".join(json.dumps({"custom_id": f"c{i}", "method": "POST", "url": "/v1/chat/completions", "body": b})
                    + "\n" for i, b in enumerate(bodies))
    file = client.files.create(file=("in.jsonl", lines.encode()), purpose="batch")
    return client.batches.create(input_file_id=file.id, endpoint="/v1/chat/completions", completion_window="24h")


def test_openai_sdk_round_trip_files_batches_content() -> None:
    with SimServer(OPEN) as url:
        bodies = [sim_client(url, "openai").body(p) for p in prompts(2)]
        batch = openai_batch(openai.OpenAI(api_key="k", base_url=f"{url}/v1", max_retries=0), bodies)
        assert batch.status == "in_progress" and batch.output_file_id is None
    with SimServer(DONE) as url:
        client = openai.OpenAI(api_key="k", base_url=f"{url}/v1", max_retries=0)
        done = client.batches.retrieve(openai_batch(client, bodies).id)
        assert done.status == "completed" and done.request_counts.completed == 2 and done.error_file_id is None
        out = [json.loads(line) for line in client.files.content(done.output_file_id).text.splitlines()]
        assert [o["custom_id"] for o in out] == ["c0", "c1"]
        for o, p in zip(out, prompts(2), strict=True):
            assert o["response"]["status_code"] == 200 and o["error"] is None
            assert o["response"]["body"]["choices"][0]["message"]["content"] == online_text(url, "openai", p)


@pytest.mark.parametrize("api", ["anthropic", "openai"])
def test_batch_client_maps_results_by_custom_id_with_errors_and_expiry(api: str) -> None:
    """Errored and expired entries come back as failures of their own custom id; the rest as replies."""
    server = SimServer(SimSettings(seed=1, batch={"delay_s": 1.0, "errored": 0.3, "expired": 0.3}))

    async def run(url: str) -> dict[str, BatchResult]:
        online = sim_client(url, api)
        route = BatchRoute(api=api, provider="sim", base_url=online.base_url, model=online.model.name, api_key="k")
        api_client = batch_client(route)
        try:
            batch_id = await api_client.create({f"call-k{i:02d}": online.body(p) for i, p in enumerate(prompts(12))}, "i1")
            assert not await api_client.ended(batch_id)
            while not await api_client.ended(batch_id):
                await asyncio.sleep(0.05)
            return await api_client.results(batch_id)
        finally:
            await api_client.close()
            await online.close()

    with server as url:
        results = asyncio.run(run(url))
        log = {e.custom_id: e.status for e in server.log if e.custom_id}
    assert sorted(results) == sorted(log) and len(results) == 12
    for custom_id, result in results.items():
        if log[custom_id] == 200:
            assert result.sent is not None and json.loads(result.sent.text)["action"]
            assert result.sent.usage.output_tokens > 0 and result.sent.request_id.startswith(result.batch_id)
        else:
            assert result.sent is None and result.error
    assert {"errored", "expired", 200} <= set(log.values())


def direct_submit(api_client_of):
    """A batcher of one request per batch, without Ray: create, poll, read."""
    async def submit(route: BatchRoute, body: dict, call_id: str) -> BatchResult:
        api_client = api_client_of(route)
        try:
            batch_id = await api_client.create({call_id: body}, f"i-{call_id}")
            while not await api_client.ended(batch_id):
                await asyncio.sleep(0.05)
            return (await api_client.results(batch_id))[call_id]
        finally:
            await api_client.close()
    return submit


@pytest.mark.parametrize("api", ["anthropic", "openai"])
def test_batched_client_costs_the_batch_price_and_retries_failures_online(api: str) -> None:
    prompt = prompts(1)[0]

    async def run(url: str) -> tuple:
        online = sim_client(url, api)
        batched = BatchedClient(sim_client(url, api), direct_submit(batch_client))
        try:
            return await online.complete(prompt, "x-k01"), await batched.complete(prompt, "x-k02")
        finally:
            await online.close()
            await batched.close()

    with SimServer(SimSettings(batch={"delay_s": 0.1})) as url:
        plain, cheap = asyncio.run(run(url))
    assert cheap.text == plain.text and cheap.request == plain.request and cheap.usage == plain.usage
    assert cheap.cost_usd == pytest.approx(plain.cost_usd * 0.5) and plain.cost_usd > 0
    server = SimServer(SimSettings(batch={"delay_s": 0.1, "errored": 1.0}))
    with server as url:
        plain, retried = asyncio.run(run(url))
    assert retried.text == plain.text and retried.cost_usd == pytest.approx(plain.cost_usd)  # paid online
    assert retried.attempt_errors[0].startswith("batch ") and retried.attempts == 2
    assert [e.status for e in server.log] == [200, "errored", 200]  # online, the batch entry, online again


def test_batched_client_failure_online_keeps_the_batch_note() -> None:
    async def run(url: str) -> TechnicalFailure:
        batched = BatchedClient(sim_client(url, "anthropic"), direct_submit(batch_client))
        try:
            await batched.complete(prompts(1)[0], "x-k01")
        except TechnicalFailure as exc:
            return exc
        finally:
            await batched.close()
        raise AssertionError("expected a technical failure")

    with SimServer(SimSettings(batch={"delay_s": 0.05, "expired": 1.0}, faults={"error_5xx": 1.0})) as url:
        exc = asyncio.run(run(url))
    assert exc.reply.attempt_errors[0].startswith("batch ") and "expired" in exc.reply.attempt_errors[0]
