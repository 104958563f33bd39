"""Batch mode: the batcher gathers, journals and resumes batches; a killed batch sweep pays no call twice."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from pathlib import Path

import polars as pl
import pytest
import yaml
from helpers import CONF, ROOT, game_config

from bargain_ray.__main__ import main
from bargain_ray.clients import BatchedClient, BatchRoute
from bargain_ray.config import BatchRun, ModelConfig, compose_command
from bargain_ray.config.errors import ConfigError
from bargain_ray.design import resolve
from bargain_ray.execution.batcher import Batcher, batched_clients
from bargain_ray.games import load_game
from bargain_ray.providers import ClientPool, make_client
from bargain_ray.providers.routing import LocalProvider, SimProvider
from bargain_ray.providers.sim import SimServer, SimSettings
from bargain_ray.store import read_batches, read_calls

DELAY_S = 0.75
"""Seconds a batch stays open at the sim: the kill (at most ~10 ms after the batch is journaled) lands inside
the first one. Every turn of the sweep waits this long once, hence the short games below."""


def get_json(url: str) -> list[dict]:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(url, timeout=10) as response:
        return json.load(response)


def bodies(url: str, n: int, api: str = "anthropic") -> tuple[BatchRoute, list[dict]]:
    data = yaml.safe_load((CONF / "model" / "claude-opus-5-5.yaml").read_text())
    model = ModelConfig.model_validate(data).model_copy(update={"provider": "sim"})
    client = make_client(model, SimProvider(settings={"base_url": url, "apis": {model.name: api}}))
    game = load_game(game_config("tickets"))
    out = [client.body(game.prompt(game.start(i, "buyer"), "buyer")) for i in range(n)]
    return client.batch_route().model_copy(update={"api_key": "k"}), out


def test_batcher_sends_one_batch_per_gathering_and_a_new_batcher_collects_journaled_ones(tmp_path: Path) -> None:
    """Ray-free: the actor's class in-process. Resubmitted journaled requests reuse their batch; a changed one does not."""
    settings = BatchRun(max_requests=4, max_wait_s=0.2, poll_s=0.05)
    server = SimServer(SimSettings(batch={"delay_s": 0.3}))
    ids = [f"u{i}-k01" for i in range(5)] + ["u5-" + "k" * 70]  # the last too long for a custom id: hashed

    async def run(url: str) -> tuple:
        route, reqs = bodies(url, 6)
        first = Batcher(str(tmp_path), settings)
        # 4 arrive together (sent at once), 2 more wait max_wait_s and go as a second batch
        a = await asyncio.gather(*(first.submit(route, b, ids[i]) for i, b in enumerate(reqs)))
        await first.close()
        again = Batcher(str(tmp_path), settings)
        changed = {**reqs[0], "max_tokens": 7}
        b = await asyncio.gather(*(again.submit(route, b, ids[i]) for i, b in enumerate(reqs)),
                                 again.submit(route, changed, "u0-k01"))
        await again.close()
        return a, b, first.batches_sent(), again.batches_sent()

    with server as url:
        a, b, sent_first, sent_again = asyncio.run(run(url))
        sim_batches = get_json(f"{url}/sim/batches")
    assert sent_first == 2 and [len(x["custom_ids"]) for x in sim_batches[:2]] == [4, 2]
    assert all(r.sent is not None for r in a + b)
    assert [r.sent.text for r in a] == [r.sent.text for r in b[:6]]  # collected again, not sent again
    assert [r.batch_id for r in a] == [r.batch_id for r in b[:6]]
    assert sent_again == 1 and sim_batches[2]["custom_ids"] == ["u0-k01"]  # only the changed request
    journaled = read_batches(tmp_path)
    assert [sorted(j.calls) for j in journaled] == [ids[:4], ids[4:], ["u0-k01"]]
    assert sim_batches[1]["custom_ids"][1].startswith("h-")


@pytest.mark.parametrize("api", ["anthropic", "openai"])
def test_a_batcher_killed_while_the_provider_creates_its_batch_leaves_it_to_the_next_which_collects_it(
        tmp_path: Path, api: str) -> None:
    """The sim answers a create call only ``create_delay_s`` after it created (and billed) the batch; the first batcher
    dies in that window (its tasks cancelled the moment the sim holds the batch: on disk exactly what a SIGKILL
    leaves). The next one finds the batch at the provider (OpenAI: by its metadata; Anthropic: by size and custom
    ids) and collects it: the provider never receives a request twice."""
    settings = BatchRun(max_requests=3, max_wait_s=0.1, poll_s=0.05)
    server = SimServer(SimSettings(batch={"delay_s": 0.3, "create_delay_s": 10}))
    ids = [f"u{i}-k01" for i in range(3)]

    async def run(url: str) -> tuple[list, int]:
        route, reqs = bodies(url, 3, api)
        first = Batcher(str(tmp_path), settings)
        calls = [asyncio.create_task(first.submit(route, b, ids[i])) for i, b in enumerate(reqs)]
        while not server.log:
            await asyncio.sleep(0.005)
        for task in asyncio.all_tasks() - {asyncio.current_task()}:
            task.cancel()
        await asyncio.gather(*calls, return_exceptions=True)
        await first.close()
        again = Batcher(str(tmp_path), settings)
        results = await asyncio.gather(*(again.submit(route, b, ids[i]) for i, b in enumerate(reqs)))
        await again.close()
        return results, again.batches_sent()

    with server as url:
        results, sent_again = asyncio.run(run(url))
        sim_batches = get_json(f"{url}/sim/batches")
    assert len(sim_batches) == 1 and sent_again == 0, sim_batches
    assert Counter(e.custom_id for e in server.log) == Counter(ids)
    assert all(r.sent is not None and r.batch_id == sim_batches[0]["batch_id"] for r in results)
    assert [(b.batch_id, sorted(b.calls)) for b in read_batches(tmp_path)] == [(sim_batches[0]["batch_id"], ids)]


def sweep_args(url: str, folder: Path) -> list[str]:
    return [sys.executable, "-m", "bargain_ray", "+grid=c3_smoke", "provider=sim",
            f"provider.settings.base_url={url}", f"run.dir={folder}", "run.batch_api=true",
            "run.batch.max_wait_s=0.3", "run.batch.poll_s=0.2", "run.progress=false", "run.report=false",
            "games.tickets.max_turns=4"]


def test_killed_batch_sweep_collects_its_open_batches_and_pays_each_call_once(tmp_path: Path, sweep_env) -> None:
    """The sim serves from this process: it outlives the sweep's SIGKILL, and its log counts every request."""
    with SimServer(SimSettings(batch={"delay_s": DELAY_S})) as url:
        folder = tmp_path / "sweep"
        journal = folder / "batches.journal.jsonl"
        proc = subprocess.Popen(sweep_args(url, folder), env=sweep_env, cwd=ROOT,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 180
        while proc.poll() is None and time.time() < deadline and not (journal.exists() and read_batches(folder)):
            time.sleep(0.01)  # the first batch created (an intent's line comes before it)
        assert proc.poll() is None, "the sweep ended before its first batch was journaled"
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        open_at_kill = read_batches(folder)
        first = {c for b in open_at_kill for c in b.calls}
        delivered = {e.call_id for entries in read_calls(folder, skip=set()).values() for e in entries}
        assert first and not first & delivered, "the kill must land while the journaled batch is open"

        assert main(sweep_args(url, folder)[3:]) == 0  # the resume, in-process on the session's Ray
        log = get_json(f"{url}/sim/log")

    games = pl.read_parquet(folder / "games.parquet")
    calls = pl.read_parquet(folder / "calls.parquet")
    assert games.height == 16 and games["known"].all()
    received = Counter(e["custom_id"] for e in log if e.get("batch_id"))
    online = [e for e in log if not e.get("batch_id")]
    assert not online  # no entry errored or expired: nothing went online
    assert set(received) == set(calls["call_id"]) and max(received.values()) == 1, received.most_common(3)
    resumed = calls.filter(pl.col("call_id").is_in(list(first)))
    assert resumed.height == len(first)  # the open batch's requests were collected, each once
    assert calls["request_id"].str.starts_with("msgbatch_sim").all()  # every reply came from a batch
    assert calls["cost_usd"].sum() > 0


def test_batch_mode_wraps_only_models_with_a_batch_api() -> None:
    """run.batch_api batches every anthropic/openai model, a model's own batch_api wins, others stay online."""
    base = ["+grid=c3_smoke", "provider=sim", "provider.settings.base_url=http://127.0.0.1:9"]
    sweep = resolve(compose_command([*base, "run.batch_api=true", "+models.H.batch_api=false"]))
    pool = ClientPool(sweep.provider, {}, batched_clients(sweep))
    assert isinstance(pool.get(sweep.models["O"]), BatchedClient)
    assert not isinstance(pool.get(sweep.models["H"]), BatchedClient)
    assert batched_clients(resolve(compose_command(base))) is None
    local = LocalProvider(settings={"base_url": "http://127.0.0.1:9/v1", "name": "m"})
    compatible = make_client(sweep.models["O"].model_copy(update={"provider": "local"}), local)
    assert batched_clients(sweep)(sweep.models["O"], compatible) is compatible  # no batch API: online
    with pytest.raises(ConfigError, match="models.O.batch_api=true: the openai_compatible API has no batch API"):
        resolve(compose_command(["+grid=c3_smoke", "models.O.provider=openai_compatible", "+models.O.batch_api=true"]))
