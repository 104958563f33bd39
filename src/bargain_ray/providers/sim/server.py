"""The simulated provider's HTTP server: Anthropic ``/v1/messages`` and OpenAI ``/v1/chat/completions``.

Each request is answered by a strategy agent reading the request's own text,
after a drawn latency, unless a rate limit or an injected fault answers first.
Every request that arrives is logged (``log.LogEntry``, ``GET /sim/log``), so tests can compare
what was served with what the sweep recorded, and count the requests that came
inside a wait the server had announced (``requests_inside_waits``). The batch APIs live in ``batches``
and answer each batched request with the same ``answer``.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import json
import math
import random
import socket
import threading
import time
from collections import defaultdict
from typing import Any

from aiohttp import web

from bargain_ray.clients.headers import CALL_ID_HEADER, OWN_CRASH_HEADER
from bargain_ray.config.pricing import CHARS_PER_TOKEN, estimate_tokens
from bargain_ray.core.errors import crash_detail
from bargain_ray.games import strategy_reply
from bargain_ray.games.kit.concession import EXPONENTS
from bargain_ray.providers.sim.batches import Batches, OwnCrash
from bargain_ray.providers.sim.config import SimSettings
from bargain_ray.providers.sim.limits import Announcement, ModelLimits
from bargain_ray.providers.sim.log import LogEntry, dump_log

FAULTS = ("error_5xx", "overloaded", "timeout", "drop", "malformed", "refusal", "overlong")
ERROR_TYPES = {429: "rate_limit_error", 500: "api_error", 503: "api_error", 529: "overloaded_error"}
REFUSAL = "I can't help with that request."


def tokens(text: str) -> int:
    """A rough token count (``config.pricing.estimate_tokens``: four characters a token), as the sim bills them."""
    return estimate_tokens(text)


def _text(content: Any) -> str:
    """A message's text, whether a string or a list of content blocks."""
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content or [] if isinstance(b, dict))


def _key_sha(request: web.Request) -> str | None:
    """A short hash of the credential sent (never the credential), so tests can see that keys arrive."""
    key = request.headers.get("x-api-key") or request.headers.get("authorization", "").removeprefix("Bearer ")
    return hashlib.sha256(key.encode()).hexdigest()[:12] if key else None


def _overlong(reply: str) -> str:
    """The reply with a message that breaks an 80-word limit."""
    padding = " ".join(["indeed"] * 120)
    try:
        data = json.loads(reply)
    except ValueError:
        return f"{reply} {padding}"
    if isinstance(data, dict) and "message" in data:
        data["message"] = f"{data['message']} {padding}"
        return json.dumps(data)
    return f"{reply} {padding}"


class SimServer:
    """Runs the aiohttp app on its own thread and event loop; ``with SimServer(s) as url:``."""

    def __init__(self, settings: SimSettings) -> None:
        self.settings = settings
        self._faults = random.Random(f"{settings.seed}-faults")
        self._latency = random.Random(f"{settings.seed}-latency")
        self._ids = itertools.count(1)
        self._answered: defaultdict[str | None, int] = defaultdict(int)
        """Replies given, per model and in all (None), online and batched: what a version change counts."""
        self._limits: dict[str, ModelLimits] = {}
        self._log: list[LogEntry] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None
        self.base_url = ""

    # lifecycle -----------------------------------------------------------------
    def start(self) -> str:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.settings.host, self.settings.port))
        host, port = sock.getsockname()[:2]
        self.base_url = f"http://{host}:{port}"
        self._loop = loop = asyncio.new_event_loop()
        ready = threading.Event()

        async def serve() -> None:
            app = web.Application(client_max_size=64 * 2**20)
            app.router.add_post("/v1/messages", self._anthropic)
            app.router.add_post("/v1/chat/completions", self._openai)
            app.router.add_get("/sim/log", self._get_log)
            Batches(self.settings, self._log, self._answer, _key_sha).routes(app)
            self._runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=0.1)
            await self._runner.setup()
            await web.SockSite(self._runner, sock).start()
            ready.set()

        def run() -> None:
            asyncio.set_event_loop(loop)
            loop.run_until_complete(serve())
            loop.run_forever()

        self._thread = threading.Thread(target=run, name="bargain-ray-sim", daemon=True)
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError("the simulated provider did not start")
        return self.base_url

    def stop(self) -> None:
        if self._loop is None or self._thread is None:
            return
        loop = self._loop

        async def shutdown() -> None:
            if self._runner is not None:
                await self._runner.cleanup()
            rest = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in rest:
                task.cancel()
            await asyncio.gather(*rest, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(shutdown(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        self._thread.join(10)
        loop.close()
        self._loop = None

    def __enter__(self) -> str:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def log(self) -> list[LogEntry]:
        """Every request that arrived, in arrival order (copies: the server goes on writing its own)."""
        return [e.model_copy() for e in self._log]

    async def _get_log(self, request: web.Request) -> web.Response:
        return web.Response(body=dump_log(self._log), content_type="application/json")

    # requests ------------------------------------------------------------------
    async def _anthropic(self, request: web.Request) -> web.StreamResponse:
        return await self._serve(request, "anthropic", await request.json())

    async def _openai(self, request: web.Request) -> web.StreamResponse:
        return await self._serve(request, "openai", await request.json())

    async def _serve(self, request: web.Request, api: str, body: dict[str, Any]) -> web.StreamResponse:  # free-form: request JSON
        model = str(body.get("model", ""))
        n = next(self._ids)
        rid = f"req_sim_{n:08d}" if api == "anthropic" else f"chatcmpl-sim{n:08d}"
        input_tokens = prompt_tokens(api, body)
        entry = LogEntry(
            request_id=rid, api=api, model=model, arrived=time.time(), status=None, fault=None,
            input_tokens=input_tokens, output_tokens=0, key_sha=_key_sha(request),
            call_id=request.headers.get(CALL_ID_HEADER),
        )
        self._log.append(entry)
        limits = self._limits.setdefault(f"{api}:{model}", ModelLimits(self.settings.limits, api))
        # OpenAI counts what a request may write against its token limit: absent, nothing is counted
        refused = limits.admit(input_tokens, int(body.get("max_tokens") or body.get("max_completion_tokens") or 0))
        if refused:
            entry.status = 429
            return self._error(api, 429, self._headers(rid, entry, limits.announce(), refused))
        # what the headers report: the buckets as this request was admitted, or as it is answered
        admitted = limits.announce() if self.settings.limits.report_at == "arrival" else None
        entry.left = (admitted or limits.announce()).remaining.get("requests")  # the request bucket, admitted
        fault = self._draw(model)
        entry.fault = fault
        await asyncio.sleep(self._delay())
        if fault == "timeout":
            entry.status = "timeout"
            await asyncio.sleep(self.settings.timeout_sleep_s)
            return self._error(api, 500, self._headers(rid, entry, admitted or limits.announce()))
        if fault == "drop":
            entry.status = "dropped"
            if request.transport is not None:
                request.transport.close()
            return web.Response(status=500)
        if fault in ("error_5xx", "overloaded"):
            status = 529 if fault == "overloaded" else self._faults.choice((500, 503))
            entry.status = status
            return self._error(api, status, self._headers(rid, entry, admitted or limits.announce()))
        try:
            payload, out_tokens = self._answer(self.settings, api, body, rid, fault, entry.call_id or "")
        except OwnCrash as crash:  # one line to the client, none of aiohttp's tracebacks on the terminal
            entry.status = 500
            headers = self._headers(rid, entry, admitted or limits.announce()) | {OWN_CRASH_HEADER: "1"}
            return self._error(api, 500, headers, str(crash))
        limits.spend_output(out_tokens)
        entry.status, entry.output_tokens, entry.done = 200, out_tokens, time.time()
        data = json.dumps(payload).encode()
        if fault == "malformed":
            data = data[: len(data) // 2]
        if request.transport is None or request.transport.is_closing():
            entry.status = "client_gone"  # the client timed out first: served, never received
        headers = self._headers(rid, entry, admitted or limits.announce())
        return web.Response(body=data, status=200, headers=headers, content_type="application/json")

    def _answer(self, settings: SimSettings, api: str, body: dict[str, Any], rid: str,  # free-form: request JSON
                fault: str | None = None, call: str = "") -> tuple[dict[str, Any], int]:  # free-form: response JSON
        """``answer``, counted, reporting the changed version once ``served_version_change`` says so."""
        payload, out_tokens = answer(settings, api, body, rid, fault, call)
        model = str(body.get("model", ""))
        self._answered[None] += 1
        self._answered[model] += 1
        change = settings.served_version_change
        counted = self._answered[model if change is not None and change.model else None]
        if change is not None and (served := change.served(model, counted)) is not None:
            payload["model"] = served[0]
            if "system_fingerprint" in payload:
                payload["system_fingerprint"] = served[1]
        return payload, out_tokens

    def _draw(self, model: str) -> str | None:
        """At most one fault per request, from the seeded stream (the model's own faults where it has them)."""
        faults = self.settings.model_faults.get(model, self.settings.faults)
        x = self._faults.random()
        for name in FAULTS:
            x -= getattr(faults, name)
            if x < 0:
                return name
        return None

    def _delay(self) -> float:
        lat = self.settings.latency
        if lat.median_s <= 0:
            return 0.0
        return min(lat.median_s * self._latency.lognormvariate(0.0, lat.sigma), lat.max_s)

    def _headers(self, rid: str, entry: LogEntry, told: Announcement,
                 refused: dict[str, float] | None = None) -> dict[str, str]:
        """The response's headers; the wait a 429 announces is logged (``announced_at``, ``wait_until``, wall times).

        A 429 announces its ``retry-after`` (unless ``limits.retry_after`` is off), else the resets of
        the limits that refused it. Any other response announces no wait: its resets are the times its
        buckets are full again, and a bucket at 0 admits the next request after one request's refill.
        """
        headers = {"request-id" if entry.api == "anthropic" else "x-request-id": rid, **told.headers}
        if not refused:
            return headers
        now = time.time()
        until = [told.resets_at[k] for k in refused]
        if self.settings.limits.retry_after:
            headers["retry-after"] = f"{max(max(refused.values()), 0.001):.3f}"
            until = [now + float(headers["retry-after"])]
        entry.announced_at, entry.wait_until = now, max(until)
        return headers

    @staticmethod
    def _error(api: str, status: int, headers: dict[str, str], message: str | None = None) -> web.Response:
        message = message or f"simulated {status}"
        if api == "anthropic":
            body = {"type": "error", "error": {"type": ERROR_TYPES.get(status, "api_error"), "message": message}}
        else:
            body = {"error": {"message": message, "type": ERROR_TYPES.get(status, "server_error"), "code": None}}
        return web.json_response(body, status=status, headers=headers)

    @staticmethod
    def _anthropic_body(rid: str, model: str, text: str, stop: str, n_in: int, n_out: int) -> dict[str, Any]:  # free-form: response JSON
        return {
            "id": f"msg_{rid}", "type": "message", "role": "assistant", "model": model,
            "content": [{"type": "text", "text": text}] if text else [],
            "stop_reason": stop, "stop_sequence": None,
            "usage": {"input_tokens": n_in, "output_tokens": n_out,
                      "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
        }

    @staticmethod
    def _openai_body(rid: str, model: str, text: str, stop: str, n_in: int, n_out: int,
                     served_by: str | None = None) -> dict[str, Any]:  # free-form: a response body, JSON as sent
        refused = stop == "refusal"
        finish = {"end_turn": "stop", "max_tokens": "length"}.get(stop, "stop")
        return {
            "id": rid, "object": "chat.completion", "created": int(time.time()), "model": model,
            "system_fingerprint": "fp_sim",
            "choices": [{"index": 0, "finish_reason": finish, "logprobs": None, "message": {
                "role": "assistant", "content": None if refused else text, "refusal": REFUSAL if refused else None,
            }}],
            "usage": {"prompt_tokens": n_in, "completion_tokens": n_out, "total_tokens": n_in + n_out},
        } | ({"provider": served_by} if served_by else {})


def read_prompt(api: str, body: dict[str, Any]) -> tuple[str, list[dict[str, str]]]:  # free-form: request JSON
    """The system text and the conversation of a request of either API."""
    messages = [{"role": m["role"], "content": _text(m.get("content"))} for m in body.get("messages", [])]
    if api == "anthropic":
        return _text(body.get("system", "")), messages
    system = "\n\n".join(m["content"] for m in messages if m["role"] in ("system", "developer"))
    return system, [m for m in messages if m["role"] not in ("system", "developer")]


def prompt_tokens(api: str, body: dict[str, Any]) -> int:  # free-form: a request body, JSON as received
    system, messages = read_prompt(api, body)
    return tokens(system + "".join(m["content"] for m in messages))


def strategy_params(settings: SimSettings, model: str, system: str, messages: list[dict[str, str]],
                    call: str) -> dict[str, Any]:  # free-form: a strategy's own parameters
    """The strategy that answers one request: the model's, or (``reply_noise`` > 0) drawn around it.

    The draw multiplies the concession exponent by ``exp(reply_noise * z)``, ``z`` a standard normal seeded
    by the settings' ``seed``, the call's id (``call``: what the client names it, so replicate games whose
    requests read alike still draw apart) and the request's text: the same sweep draws the same replies,
    whatever order its calls come in, and a retried call draws what its first attempt drew. With ``misread`` > 0 a
    free-text observer's reply is drawn the same way (``games.freetext.strategy.observe``): its chance and a seed.
    """
    kind = settings.strategy(model)
    params: dict[str, Any] = {"kind": kind}  # free-form: a strategy's own parameters
    if settings.misread:  # a free-text observer's misreading, drawn apart from the concession's noise
        draw = hashlib.sha256(json.dumps(["misread", settings.seed, call, model, system, messages]).encode())
        params |= {"misread": settings.misread, "draw": int.from_bytes(draw.digest()[:8])}
    if not settings.reply_noise:
        return params
    text = json.dumps([settings.seed, call, model, system, messages])
    z = random.Random(hashlib.sha256(text.encode()).digest()).gauss(0.0, 1.0)
    return params | {"exponent": EXPONENTS[kind] * math.exp(settings.reply_noise * z)}


def answer(settings: SimSettings, api: str, body: dict[str, Any], rid: str,  # free-form: a request body, as received
           fault: str | None = None, call: str = "") -> tuple[dict[str, Any], int]:  # free-form: response JSON
    """(the response body, its output tokens): the model's strategy answering a request (``call``: its id).

    The one answer of the sim, for online requests and for each request of a batch alike.
    """
    model = str(body.get("model", ""))
    system, messages = read_prompt(api, body)
    stop = "refusal" if fault == "refusal" else "end_turn"
    params = strategy_params(settings, model, system, messages, call)
    try:
        text = "" if fault == "refusal" else strategy_reply(system, messages, params)
    except Exception as exc:  # a bug of ours, answered as one (``OwnCrash``), never as the provider's 5xx
        raise OwnCrash(crash_detail(exc, f"the simulated provider's strategy for {model}")) from exc
    if fault == "overlong":
        text = _overlong(text)
    max_tokens = int(body.get("max_tokens") or body.get("max_completion_tokens") or 1 << 30)
    if tokens(text) > max_tokens:
        text, stop = text[: max_tokens * CHARS_PER_TOKEN], "max_tokens"
    out_tokens = tokens(text or REFUSAL)
    n_in = prompt_tokens(api, body)
    if api == "anthropic":
        return SimServer._anthropic_body(rid, model, text, stop, n_in, out_tokens), out_tokens
    return SimServer._openai_body(rid, model, text, stop, n_in, out_tokens, settings.served_by.get(model)), out_tokens
