"""The provider registry: every model API is one entry (client, retry classification, header reader, key variable,
batch API, where the sim serves it); the config's providers are the registry's; the simulated provider serves each
API it claims and a config that asks it for another is one line; a provider written in a test alone (one module
and its YAML) runs a sweep."""

from __future__ import annotations

import asyncio
import gc
import hashlib
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import polars as pl
import pytest
from helpers import game_config

from bargain_ray.clients import API, batch_client, register, registry
from bargain_ray.clients.batches import BatchRoute
from bargain_ray.config import ModelConfig
from bargain_ray.config.errors import ConfigError
from bargain_ray.design import load_config
from bargain_ray.games import load_game
from bargain_ray.providers import key_names, make_client
from bargain_ray.providers.routing import SimProvider
from bargain_ray.providers.sim import SimServer, SimSettings

FAST = {"max_attempts": 2, "initial_s": 0.001, "max_s": 0.01, "timeout_s": 10.0}
CHAT = "bargain_ray.clients.openai_chat"


def refused(*overrides: str) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load_config("c3_smoke", list(overrides))
    return caught.value.problems


def test_the_configs_providers_are_the_registrys() -> None:
    assert refused("models.O.provider=antropic") == [
        "models.O.provider=antropic: no such model API; did you mean provider=anthropic?"]
    register(API(name="test_acme_in_process", key_env="ACME_API_KEY", client=f"{CHAT}:CompatibleClient",
                 errors=f"{CHAT}:ERRORS"))
    try:
        sweep = load_config("c3_smoke", ["models.O.provider=test_acme_in_process"])
        assert sweep.models["O"].provider == "test_acme_in_process"
        assert "ACME_API_KEY" in key_names(sweep)
    finally:
        registry._REGISTERED.pop("test_acme_in_process")


def test_a_batch_api_is_asked_only_of_an_api_that_has_one() -> None:
    assert refused("models.O.provider=openai_compatible", "+models.O.batch_api=true") == [
        "models.O.batch_api=true: the openai_compatible API has no batch API (these have one: anthropic, openai)"]
    sweep = load_config("c3_smoke", ["+models.O.batch_api=true"])
    assert sweep.sends_batched(sweep.models["O"]) and not sweep.sends_batched(sweep.models["H"])
    routed = load_config("bargaining_8cells", ["provider=sim", "run.batch_api=true"])  # OpenRouter: no batch API
    assert not any(routed.sends_batched(m) for m in routed.models.values())


def test_the_sim_refuses_in_one_line_an_api_it_does_not_serve() -> None:
    register(API(name="test_unserved", key_env="UNSERVED_API_KEY", client=f"{CHAT}:CompatibleClient",
                 errors=f"{CHAT}:ERRORS"))
    try:
        assert load_config("c3_smoke", ["models.O.provider=test_unserved"]).models["O"].provider == "test_unserved"
        problems = refused("provider=sim", "models.O.provider=test_unserved")
        assert len(problems) == 1 and problems[0].startswith(
            "models.O.provider=test_unserved: the simulated provider does not serve the test_unserved API (it serves "
            "anthropic, openai, openai_compatible)")
        assert refused("provider=sim", "+provider.settings.apis.claude-opus-5-5=gemini")[0].startswith(
            "models.O.provider=gemini: the simulated provider does not serve the gemini API")
    finally:
        registry._REGISTERED.pop("test_unserved")


@pytest.mark.parametrize("api", [a for a in registry.names() if registry.get(a).sim_path is not None])
def test_the_sim_serves_each_api_it_claims_online_and_batched(api: str) -> None:
    """Through the API's own registered client (and batch API, where it has one), over real HTTP."""
    game = load_game(game_config("tickets"))
    prompt = game.prompt(game.start(0, "buyer"), "buyer")
    model = ModelConfig.model_validate({"name": f"sim-{api}", "provider": "sim", "retry": FAST})

    async def online(url: str):
        client = make_client(model, SimProvider(settings={"base_url": url, "apis": {model.name: api}}))
        try:
            return client, await client.complete(prompt, "k01")
        finally:
            await client.close()

    async def batched(client) -> dict:
        batches = batch_client(client.batch_route())
        try:
            batch_id = await batches.create({"c1": client.body(prompt)}, "i-c1")
            while not await batches.ended(batch_id):
                await asyncio.sleep(0.1)
            return await batches.results(batch_id)
        finally:
            await batches.close()

    with SimServer(SimSettings(batch={"delay_s": 0.2})) as url:
        client, reply = asyncio.run(online(url))
        assert reply.text.startswith("{") and reply.provider == "sim" and client.api is registry.get(api)
        if registry.get(api).batches is None:
            assert client.batch_api is None
            return
        results = asyncio.run(batched(client))
    assert results["c1"].sent is not None and results["c1"].sent.text.startswith("{")


def test_a_keyless_compatible_server_is_called_without_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """A local vLLM or llama.cpp takes no key, yet an openai_compatible model demanded OPENAI_API_KEY (or a variable
    of its own): ``api_key_env: false`` needs none and sends a placeholder; on a real provider it is one line."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    game = load_game(game_config("tickets"))
    prompt = game.prompt(game.start(0, "buyer"), "buyer")
    with SimServer(SimSettings()) as url:  # the sim speaks Chat Completions at /v1, as a local server does
        overrides = ["models.O.provider=openai_compatible", f"+models.O.base_url={url}/v1", "models.O.api_key_env=false"]
        sweep = load_config("c3_smoke", overrides)
        assert "OPENAI_API_KEY" not in key_names(sweep)
        client = make_client(sweep.models["O"], sweep.provider, {})

        async def ask():
            try:
                return await client.complete(prompt, "k01")
            finally:
                await client.close()

        assert asyncio.run(ask()).text.startswith("{")
    assert refused("models.O.api_key_env=false") == [
        "models.O.api_key_env=false: no key is for a provider: openai_compatible server that takes none, not provider "
        "'anthropic'; remove it to read the provider's key variable"]


ACME_MODULE = '''
    """Acme: a model API that speaks Chat Completions, added by a package of its own (here, a test)."""

    from bargain_ray.clients import API, CompatibleClient, register


    class AcmeClient(CompatibleClient):
        """Acme's own client: Chat Completions with the house's name on every request."""

        def body(self, prompt):
            return {**super().body(prompt), "user": "acme"}


    ACME = register(API(name="acme", key_env="ACME_API_KEY", client=AcmeClient,
                        errors="bargain_ray.clients.openai_chat:ERRORS"))
'''
ACME_MODEL = '''
    # Acme's chat model: paid by ACME_API_KEY at Acme's price.
    name: acme-chat
    provider: acme
    base_url: {url}/v1
    max_tokens: 512
    price: {{input: 1.0, output: 2.0}}
'''
ACME_GRID = '''
    # @package _global_
    # Acme's model against a linear strategy agent: one block, two assignments.
    defaults:
      - /game@games.tickets: tickets
      - /condition@conditions.C3: c3
      - /model@models.A: acme-chat
      - /model@models.L: linear

    grid:
      name: acme_demo
      experiment: acme
      blocks: 1
      designs:
        - game: tickets
          conditions: [C3]
          pairings: [AL]
          assignments:
            - {id: 1, roles: {buyer: A, seller: B}, first_speaker: buyer}
            - {id: 2, roles: {buyer: B, seller: A}, first_speaker: buyer}
'''


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip())


def test_a_provider_written_in_a_test_alone_runs_a_sweep(tmp_path: Path, sweep_env: dict[str, str]) -> None:
    """One module (``acme_api.py``, found through a ``bargain_ray.apis`` entry point) and its YAML: the driver and
    every Ray worker find the API by its name; its client carries the calls, under its own key, billed at its price."""
    key = "acme-" + "k" * 40
    server = SimServer(SimSettings())
    with server as url:
        write(tmp_path / "acme_api.py", ACME_MODULE)
        write(tmp_path / "acme_api-1.0.dist-info" / "METADATA", "Metadata-Version: 2.1\nName: acme-api\nVersion: 1.0\n")
        write(tmp_path / "acme_api-1.0.dist-info" / "entry_points.txt", "[bargain_ray.apis]\nacme = acme_api:ACME\n")
        write(tmp_path / "conf" / "model" / "acme-chat.yaml", ACME_MODEL.format(url=url))
        write(tmp_path / "conf" / "grid" / "acme_demo.yaml", ACME_GRID)
        folder = tmp_path / "sweep"
        cmd = [sys.executable, "-m", "bargain_ray", "+grid=acme_demo", f"run.dir={folder}", "run.progress=false",
               "run.report=false", "run.workers=1", "games.tickets.max_turns=4"]
        done = subprocess.run(cmd, cwd=tmp_path, env=sweep_env | {"ACME_API_KEY": key}, capture_output=True,
                              text=True, timeout=280)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    calls = pl.read_parquet(folder / "calls.parquet").filter(pl.col("provider") == "acme")
    assert calls.height > 0 and (calls["cost_usd"] > 0).all()
    assert all(json.loads(r)["user"] == "acme" for r in calls["request"])  # Acme's own client built every request
    assert server.log and {e.key_sha for e in server.log} == {_sha(key)}  # under Acme's own key
    games = pl.read_parquet(folder / "games.parquet")
    assert games.height == 2


def _sha(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()[:12]


def test_a_route_names_its_api_not_a_literal() -> None:
    route = BatchRoute(api="any_registered_api", provider="p", base_url=None, model="m", api_key="k")
    assert route.api == "any_registered_api" and "k" not in repr(route)


def test_an_apis_part_loads_with_the_collector_paused_and_leaves_it_as_it_was(tmp_path: Path,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "paused_part.py").write_text("import gc\nCOLLECTING = gc.isenabled()\n")
    (tmp_path / "broken_part.py").write_text("import gc\nCOLLECTING = gc.isenabled()\nraise RuntimeError('broken')\n")
    (tmp_path / "later_part.py").write_text("import gc\nCOLLECTING = gc.isenabled()\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert gc.isenabled()
    assert registry.load("paused_part:COLLECTING") is False, "the import ran with the collector off"
    assert gc.isenabled(), "and it is back on after"
    with pytest.raises(RuntimeError, match="broken"):
        registry.load("broken_part:COLLECTING")
    assert gc.isenabled(), "back on after an import that raised"
    gc.disable()
    try:
        assert registry.load("later_part:COLLECTING") is False
        assert not gc.isenabled(), "a caller's own pause is left to the caller"
    finally:
        gc.enable()


def test_what_an_apis_first_import_made_is_left_out_of_later_collections(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """``gc.get_objects`` lists what collections walk (the frozen are not in it)."""
    (tmp_path / "frozen_part.py").write_text("THINGS = [[] for _ in range(3)]\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    things = registry.load("frozen_part:THINGS")
    assert not any(o is things for o in gc.get_objects()), "what the import made is frozen"
    frozen, made_since = gc.get_freeze_count(), [[]]
    assert registry.load("frozen_part:THINGS") is things
    assert gc.get_freeze_count() == frozen and any(o is made_since for o in gc.get_objects()), \
        "a module loaded already is looked up: nothing is frozen"
