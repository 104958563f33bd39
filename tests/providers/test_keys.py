"""Keys: never sent to the simulated provider, never in the environment of a process Ray starts, nor of the
driver's ``git``. A server echoing the key back leaves no fragment of it anywhere: test_masking.py (its ``online``
stage is the 401 of the real provider's branch)."""

from __future__ import annotations

import asyncio
import hashlib
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from helpers import ROOT, recording_git

from bargain_ray.clients import registry
from bargain_ray.clients.batches import BatchAPI, BatchResult, BatchRoute
from bargain_ray.clients.http import Sent
from bargain_ray.clients.retry import describe
from bargain_ray.core.provenance import read_code_version
from bargain_ray.core.records import Usage
from bargain_ray.core.secrets import mask
from bargain_ray.design.resolved import compose_sweep
from bargain_ray.providers import key_env_vars
from bargain_ray.providers.clients import NO_KEY
from bargain_ray.providers.sim import SimServer, SimSettings

FRAGMENT = 8


def fake_key(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex}{uuid.uuid4().hex}"


def sha(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()[:12]


def fragments(key: str) -> set[bytes]:
    return {key[i:i + FRAGMENT].encode() for i in range(len(key) - FRAGMENT + 1)}


def test_mask_hides_the_key_and_any_long_fragment_before_the_text_is_cut() -> None:
    key = fake_key("sk-ant-api03")
    text = mask(f"bad key {key}; you sent {key[3:30]} and {key[-9:]}, prefix {key[:7]}", key)
    assert not any(f.decode() in text for f in fragments(key)) and key[:7] in text  # 7 characters say nothing
    echoed = type("AuthenticationError", (Exception,), {})(("x" * 280) + key)  # straddles the cut
    assert not any(f.decode() in describe(echoed, key) for f in fragments(key))


class EchoingBatches(BatchAPI):
    """A batch API whose ids and answers carry the key it was sent (every text a reply has), one answer with
    a token count no call can have; it records the batch ids it is asked about."""

    def __init__(self, key: str) -> None:
        super().__init__(BatchRoute(api="anthropic", provider="anthropic", base_url=None, model="m", api_key=key),
                         registry.get("anthropic"))
        self.key, self.asked = key, []

    async def _create(self, requests, intent):
        return f"msgbatch_{self.key}"

    async def _find(self, intent, size, since):
        return [f"msgbatch_{self.key}"]

    async def _ended(self, batch_id):
        self.asked.append(batch_id)
        return True

    async def _results(self, batch_id):
        self.asked.append(batch_id)
        k = self.key
        echoed = Sent(text=f"ok {k}", stop_reason=f"end_turn {k[2:40]}", usage=Usage(input_tokens=3),
                      request_id=f"{batch_id}/msg_{k}", model_version=f"m-{k}", headers={"request-id": k},
                      served_by=k, system_fingerprint=k)
        return {"a": BatchResult(batch_id, sent=echoed),
                "b": BatchResult(batch_id, sent=Sent("x", None, Usage(output_tokens=-7), None, None)),
                "c": BatchResult(batch_id, error=f"errored: bad key {k}")}

    async def close(self):
        pass


def test_a_batch_api_gives_out_ids_and_answers_masked_and_bounded() -> None:
    """A provider that echoes the key into its batch ids and every field of its answers: the runner gets each id
    masked (and is answered about it: the id itself stays in the ``BatchAPI``), each answer masked, and an answer
    with a token count no call can have as an error (its request goes online, as an errored one does)."""
    key = fake_key("sk-ant-api03")
    api = EchoingBatches(key)

    async def run() -> tuple[str, list[str], bool, dict[str, BatchResult]]:
        shown = await api.create({"a": {}}, "intent")
        return shown, await api.find("intent", 1, 0.0), await api.ended(shown), await api.results(shown)

    shown, found, ended, results = asyncio.run(run())
    assert shown == "msgbatch_***" and found == [shown] and ended
    assert api.asked == [f"msgbatch_{key}"] * 2  # the provider is asked about its own id
    assert {r.batch_id for r in results.values()} == {shown}
    assert results["b"].sent is None and "usage.output_tokens=-7" in results["b"].error
    assert results["a"].sent.text == "ok ***" and results["a"].sent.usage.input_tokens == 3
    assert not any(f.decode() in repr(results) for f in fragments(key))


def test_no_key_is_handed_out_under_provider_sim(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", fake_key("sk-ant"))
    assert key_env_vars(compose_sweep(["+grid=c3_smoke", "provider=sim"])) == {}
    assert set(key_env_vars(compose_sweep(["+grid=c3_smoke"]))) == {"ANTHROPIC_API_KEY"}


def ray_processes_with(secret: bytes, driver: int) -> tuple[set[str], set[str]]:
    """(names of Ray's processes seen, command lines of those whose environment holds ``secret``), the driver aside.

    A child the driver has forked but not yet exec'd shows the driver's command line and the environment the
    driver was started with (``/proc/<pid>/environ`` is the initial one until ``exec``): it is the driver, so
    it is left out too; once it has exec'd, its command line is its own and it is checked.
    """
    try:
        own = Path(f"/proc/{driver}/cmdline").read_bytes()
    except OSError:
        return set(), set()
    seen, leaking = set(), set()
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == driver:
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes()
            environ = (proc / "environ").read_bytes()
        except OSError:
            continue
        if b"ray" in cmdline and cmdline != own:
            name = cmdline.split(b"\0")[0].decode(errors="replace").rsplit("/", 1)[-1]
            seen.add(name)
            if secret in environ:
                leaking.add(cmdline.replace(b"\0", b" ").decode(errors="replace")[:300])
    return seen, leaking


def test_sim_gets_no_key_and_ray_processes_carry_none(tmp_path: Path) -> None:
    """A sweep that starts its own Ray with both keys set: the sim only ever sees the placeholder, and no
    process Ray started (GCS, raylet, agents, the GameRunner workers) has a key in its environment."""
    anthropic, openai = fake_key("sk-ant"), fake_key("sk-proj")
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env |= {"ANTHROPIC_API_KEY": anthropic, "OPENAI_API_KEY": openai, "PYTHONUNBUFFERED": "1",
            "RAY_TMPDIR": f"{os.environ.get('RAY_TMPDIR', '/tmp')}/keys"}
    server = SimServer(SimSettings(latency={"median_s": 0.2}))
    seen: set[str] = set()
    leaking: set[str] = set()
    with server as url:
        cmd = [sys.executable, "-m", "bargain_ray", "+grid=c3_smoke", "provider=sim", f"run.dir={tmp_path / 's'}",
               f"provider.settings.base_url={url}", "run.progress=false", "run.report=false", "run.workers=1"]
        proc = subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        while proc.poll() is None:
            for secret in (anthropic, openai):
                names, leaks = ray_processes_with(secret.encode(), proc.pid)
                seen |= names
                leaking |= leaks
            time.sleep(0.2)
        out, err = proc.communicate()
    assert proc.returncode == 0, err[-3000:]
    assert any(n.startswith("ray::") for n in seen) and any("raylet" in n for n in seen), seen
    assert not leaking, f"Ray processes with a key in their environment: {leaking}"
    shas = {entry.key_sha for entry in server.log}
    assert server.log and shas == {sha(NO_KEY)}, shas


def test_git_run_for_provenance_inherits_no_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The driver's one other child: a ``git`` first on PATH writes the environment it was started with."""
    key = fake_key("sk-ant")
    dump = recording_git(tmp_path, monkeypatch)
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    monkeypatch.setenv("MY_TEAM_TOKEN", key)  # a model's own api_key_env: a key because the sweep names it
    code = read_code_version(["MY_TEAM_TOKEN"])
    assert code is not None and code.commit == "0123abc"
    seen = dump.read_text()
    assert key not in seen and "PATH=" in seen
