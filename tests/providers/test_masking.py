"""No key leaves a client, a batch API, the batcher, a provider process or an actor in the clear: a server that echoes
the key it was sent (in a header and in its body, as a proxy's or gateway's error page does) at each stage of each
path, and not one 8-character run of the key in the sweep folder, its dataset, Ray's session logs or the terminal.
On the success path the server echoes it into every header and every field that carries text (ids, model names,
the reply, batch ids), online and batched, through both APIs; nor is a fragment in any page the live view serves.

The sweep runs in-process (the CLI's ``main`` on the session's Ray, the key in the driver's environment), its
terminal read at the file descriptors: what a ``python -m bargain_ray`` prints, Ray's own lines included."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import polars as pl
import pytest
import ray
from aiohttp import web
from helpers import serve_app

from bargain_ray.__main__ import main
from bargain_ray.analysis.view import make_app
from bargain_ray.providers.sim import SimServer, SimSettings

FRAGMENT = 8
SMALL = ["grid.designs.0.pairings=[OH]", "games.tickets.max_turns=2", "run.progress=false", "run.workers=1"]
BATCHED = ["run.batch_api=true", "run.batch.max_wait_s=0.05", "run.batch.poll_s=0.05"]
"""Each stage answers with the key the first time it is reached: nothing here waits on an open batch."""
STAGES = {
    "online": ("POST", "/v1/messages"),
    "batch create": ("POST", "/v1/messages/batches"),
    "batch poll": ("GET", "/v1/messages/batches/{id}"),
    "local server": ("*", "*"),
    "sim": ("*", "*"),
}


def fragments(key: str) -> set[bytes]:
    return {key[i:i + FRAGMENT].encode() for i in range(len(key) - FRAGMENT + 1)}


SALTED = ("id", "model", "text", "content", "stop_reason", "finish_reason", "system_fingerprint", "provider",
          "request_id")
"""The fields of a successful answer (a reply, a batch, a file, a batch's results) the key is echoed into: every one
that carries text the runner may keep; ids get it as a suffix the server strips again when they come back."""
FRAMING = ("content-type", "content-length", "content-encoding", "transfer-encoding")
"""Headers that frame the body: not echoed into (the salted body is sized anew)."""


def salted_text(text: str, key: str) -> str:
    """A reply's text with the key inside its JSON message (so the game plays on), else after it."""
    try:
        data = json.loads(text)
    except ValueError:
        return f"{text} {key}"
    if isinstance(data, dict) and isinstance(data.get("message"), str):
        return json.dumps({**data, "message": f"{data['message']} {key}"})
    return f"{text} {key}"


def salted(value: Any, key: str) -> Any:  # free-form: a response body, JSON as received
    if isinstance(value, list):
        return [salted(v, key) for v in value]
    if not isinstance(value, dict):
        return value
    out = {}
    for name, v in value.items():
        if name in ("text", "content") and isinstance(v, str):
            out[name] = salted_text(v, key)
        elif name in SALTED and isinstance(v, str):
            out[name] = f"{v}-{key}"
        else:
            out[name] = salted(v, key)
    return out


def salted_body(body: bytes, key: str) -> bytes:
    """A JSON or JSON Lines body with the key in every field of ``SALTED``."""
    try:
        return json.dumps(salted(json.loads(body), key)).encode()
    except ValueError:
        lines = [json.dumps(salted(json.loads(line), key)) for line in body.decode().splitlines() if line.strip()]
        return "".join(f"{line}\n" for line in lines).encode()


class Echoing:
    """In front of a real simulated provider: forwards every request to it, except those of ``stage``, answered 401
    with the key they carried echoed in a header and in the body; at ``batch results`` the batch's errored results
    come back with the key in their message."""

    def __init__(self, stage: str, sim: str) -> None:
        self.stage, self.sim = stage, sim
        self.seen: list[str] = []
        self.echoed = 0
        self._loop = asyncio.new_event_loop()

    def _hit(self, request: web.Request) -> bool:
        method, path = STAGES.get(self.stage, ("", ""))
        route = request.match_info.route.resource.canonical if request.match_info.route.resource else ""
        return method == "*" or (request.method == method and route == path)

    async def _echo(self, key: str) -> web.Response:
        self.echoed += 1
        message = "invalid x-api-key: " + " ".join([key] * 6) + f" (you sent {key[5:30]})"
        return web.json_response({"type": "error", "error": {"type": "authentication_error", "message": message}},
                                 status=401, headers={"x-echo-key": key, "x-ratelimit-limit-requests": key})

    async def _answer(self, request: web.Request) -> web.StreamResponse:
        key = request.headers.get("x-api-key") or request.headers.get("authorization", "").removeprefix("Bearer ")
        self.seen.append(key)
        if self._hit(request):
            return await self._echo(key)
        headers = {k: v for k, v in request.headers.items() if k.lower() not in ("content-length", "transfer-encoding")}
        path, data = request.path_qs.replace(f"-{key}", ""), (await request.read()).replace(f"-{key}".encode(), b"")
        async with aiohttp.ClientSession() as session, session.request(
                request.method, self.sim + path, data=data, headers=headers) as upstream:
            body = await upstream.read()
            if self.stage == "batch results" and request.path.endswith("/results"):
                self.echoed += 1
                body = body.replace(b"simulated batch request error", f"bad key {key}, see {key[3:20]}".encode())
            if self.stage.startswith("success") and upstream.status == 200:
                self.echoed += 1
                answered = {k: f"{v} {key}" for k, v in upstream.headers.items() if k.lower() not in FRAMING}
                answered["content-type"] = upstream.headers["content-type"]
                return web.Response(body=salted_body(body, key), status=200,
                                    headers={**answered, "x-echo-key": key, "request-id": f"req-{key}"})
            return web.Response(body=body, status=upstream.status, content_type=upstream.content_type)

    def __enter__(self) -> str:
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        app = web.Application()
        for path in ("/v1/messages", "/v1/messages/batches", "/v1/messages/batches/{id}",
                     "/v1/messages/batches/{id}/results", "/v1/chat/completions", "/{tail:.*}"):
            app.router.add_route("*", path, self._answer)
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False)

        async def start() -> None:
            await self._runner.setup()
            await web.SockSite(self._runner, sock).start()

        self._loop.run_until_complete(start())
        threading.Thread(target=self._loop.run_forever, daemon=True).start()
        return f"http://127.0.0.1:{sock.getsockname()[1]}"

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)


def session_logs() -> Iterator[Path]:
    """Every file of the Ray session the sweeps join (the test session's cluster)."""
    session = Path(ray._private.worker._global_node.get_session_dir_path())
    return (p for p in session.rglob("*") if p.is_file() and not p.is_symlink())


def overrides(stage: str, url: str, folder: Path) -> list[str]:
    where = [f"run.dir={folder}", *SMALL]
    if stage == "local server":
        return [*where, "provider=local", f"provider.settings.base_url={url}/v1"]
    if stage == "sim":
        return [*where, "provider=sim", f"provider.settings.base_url={url}"]
    routed = [f"models.O.base_url={url}", f"models.H.base_url={url}"]
    if stage.startswith("success"):  # H through the OpenAI API: its replies name a router's provider too
        routed = [f"models.O.base_url={url}", "models.H.provider=openai", f"models.H.base_url={url}/v1"]
    return [*where, *routed, *(BATCHED if stage.startswith(("batch", "success batch")) else [])]


def view_pages(root: Path, folder: Path) -> dict[str, bytes]:
    """Every page the live view serves of ``folder`` (under ``root``): the pages, its API, each file of the folder."""
    files = [f"files/{folder.name}/{p.relative_to(folder)}" for p in folder.rglob("*") if p.is_file()]
    pages = {}
    with serve_app(make_app(root)) as url:
        for path in ["", f"?sweep={folder.name}", "api/sweeps", f"api/sweep?name={folder.name}", *files]:
            try:
                with urllib.request.urlopen(f"{url}/{path}", timeout=30) as response:
                    pages[path] = response.read()
            except urllib.error.HTTPError as refused:  # a file the view does not serve
                pages[path] = refused.read()
    return pages


@pytest.mark.parametrize("stage", ["online", "batch create", "batch poll", "batch results", "local server", "sim",
                                   "success online", "success batch"])
def test_a_server_echoing_the_key_leaves_no_fragment_anywhere(stage: str, tmp_path: Path, ray_session: str,
                                                              monkeypatch: pytest.MonkeyPatch,
                                                              capfd: pytest.CaptureFixture[str]) -> None:
    key = f"sk-ant-api03-{uuid.uuid4().hex}{uuid.uuid4().hex}"
    folder = tmp_path / "sweep"
    errored = 1.0 if stage == "batch results" else 0.0
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    monkeypatch.setenv("OPENAI_API_KEY", key)
    routed = {"claude-haiku-5-5": "Anthropic"}  # a router's provider field in H's OpenAI-style replies
    with SimServer(SimSettings(batch={"delay_s": 0.05, "errored": errored}, served_by=routed)) as sim:
        echoing = Echoing(stage, sim)
        with echoing as url:
            main(["+grid=c3_smoke", *overrides(stage, url, folder)])
    done = capfd.readouterr()
    assert (folder / "games.parquet").exists(), done.out[-2000:] + done.err[-3000:]
    assert f"sweep folder: {folder}" in done.out  # the terminal the fragments are looked for in was read
    assert echoing.echoed > 0  # the stage under test answered with the key it was sent
    keyless = stage in ("local server", "sim")  # the real key is never sent there: they get a placeholder
    assert (key in echoing.seen) is not keyless
    if stage == "online":  # the real provider's branch sends the key with every request, and the error is recorded
        assert set(echoing.seen) == {key}
        assert any(b"authentication_error" in p.read_bytes() for p in folder.rglob("*") if p.is_file())
    assert (folder / "dataset").is_dir() and (folder / "report.html").is_file()
    pages = view_pages(tmp_path, folder)
    assert pages[f"api/sweep?name={folder.name}"].startswith(b"{")
    leaks = [str(p) for p in [*folder.rglob("*"), *session_logs()] if p.is_file()
             and any(f in p.read_bytes() for f in fragments(key))]
    leaks += [path for path, page in pages.items() if any(f in page for f in fragments(key))]
    assert leaks == []
    if stage.startswith("success"):  # every answer was kept, masked: the games played, their calls say so
        assert pl.read_parquet(folder / "games.parquet")["known"].all()
        calls = pl.read_parquet(folder / "calls.parquet")
        assert calls["model_version"].str.ends_with("-***").all()
        assert calls["request_id"].str.contains("***", literal=True).all()
    if stage == "success batch":
        journaled = (folder / "batches.journal.jsonl").read_bytes()  # both APIs' batch ids, masked
        assert journaled.count(b'"batch_id":') >= 2 and b'-***"' in journaled and b"msgbatch_" in journaled
    assert not any(f.decode() in done.out + done.err for f in fragments(key))
