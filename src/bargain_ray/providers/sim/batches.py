"""The sim's batch APIs over real HTTP: Anthropic Message Batches, and OpenAI files + batches.

Paths and shapes follow the SDKs (anthropic 2.10, openai 3.51): ``POST /v1/messages/batches``
with ``requests: [{custom_id, params}]``, ``GET /v1/messages/batches/{id}`` (``results_url`` once
ended) and its JSONL results; ``POST /v1/files`` (multipart, ``purpose=batch``), ``POST /v1/batches``,
``GET /v1/batches/{id}`` and ``GET /v1/files/{id}/content`` (JSONL with ``custom_id``/``response``/``error``);
both lists (``GET /v1/messages/batches``, ``GET /v1/batches``: newest first, paged by ``after_id``/``after``), and
OpenAI's batch ``metadata``, so a client that lost a create's answer finds its batch.

Each request of a batch is answered by the sim's one answer function (the online path's), drawn
errored or expired at the configured rates when the batch is created, and shown only once the
batch's processing delay has passed. Every batch created is logged (``GET /sim/batches``) and every
request in it joins the request log (``GET /sim/log``) with its ``batch_id`` and ``custom_id``, so a
test counts what the provider received. Errored, expired and canceled requests are not billed.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from aiohttp import web

from bargain_ray.providers.sim.config import SimSettings
from bargain_ray.providers.sim.log import LogEntry

Answer = Callable[..., tuple[dict[str, Any], int]]  # free-form: a response body, JSON as sent
"""The sim's answer: (settings, api, request body, request id, call=its custom id) -> (response body, output tokens);
it raises ``OwnCrash`` when the sim's own code crashed answering."""


class OwnCrash(Exception):
    """The sim's own code (a strategy answering a request) crashed: answered as ours, never as the provider's
    error (``clients.headers.OWN_CRASH_HEADER``)."""
OPENAI_ENDPOINT = "/v1/chat/completions"


@dataclass
class SimBatch:
    """One batch as the sim holds it: its entries (log entries, shared with the request log) and answers."""

    id: str
    api: str
    created: float
    ends: float
    entries: list[LogEntry]
    answers: dict[str | None, dict[str, Any]] = field(default_factory=dict)  # free-form: a response body, JSON as sent
    canceled_at: float | None = None
    metadata: dict[str, str] | None = None
    input_file_id: str | None = None
    output_file_id: str | None = None
    error_file_id: str | None = None

    def ended(self) -> bool:
        return self.canceled_at is not None or time.time() >= self.ends


def _iso(t: float | None) -> str | None:
    return None if t is None else datetime.fromtimestamp(t, UTC).isoformat().replace("+00:00", "Z")


def _not_found(api: str, what: str) -> web.Response:
    message = f"no such {what}"
    if api == "anthropic":
        return web.json_response({"type": "error", "error": {"type": "not_found_error", "message": message}}, status=404)
    return web.json_response({"error": {"message": message, "type": "invalid_request_error", "code": None}}, status=404)


def _bad_request(api: str, message: str) -> web.Response:
    if api == "anthropic":
        body = {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
    else:
        body = {"error": {"message": message, "type": "invalid_request_error", "code": None}}
    return web.json_response(body, status=400)


class Batches:
    """The batch endpoints of one sim; ``routes(app)`` registers them."""

    def __init__(self, settings: SimSettings, log: list[LogEntry], answer: Answer,
                 key_sha: Callable[[web.Request], str | None]) -> None:
        self.settings = settings
        self._log = log
        self._answer = answer
        self._key_sha = key_sha
        self._draws = random.Random(f"{settings.seed}-batches")
        self._ids = itertools.count(1)
        self._batches: dict[str, SimBatch] = {}
        self._files: dict[str, bytes] = {}

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/messages/batches", self._anthropic_create)
        app.router.add_get("/v1/messages/batches", self._anthropic_list)
        app.router.add_get("/v1/messages/batches/{id}", self._anthropic_retrieve)
        app.router.add_get("/v1/messages/batches/{id}/results", self._anthropic_results)
        app.router.add_post("/v1/messages/batches/{id}/cancel", self._anthropic_cancel)
        app.router.add_post("/v1/files", self._file_create)
        app.router.add_get("/v1/files/{id}/content", self._file_content)
        app.router.add_post("/v1/batches", self._openai_create)
        app.router.add_get("/v1/batches", self._openai_list)
        app.router.add_get("/v1/batches/{id}", self._openai_retrieve)
        app.router.add_post("/v1/batches/{id}/cancel", self._openai_cancel)
        app.router.add_get("/sim/batches", self._get_batches)

    # shared --------------------------------------------------------------------
    def _create(self, request: web.Request, api: str, requests: list[tuple[str, dict[str, Any]]]) -> SimBatch:  # free-form: request JSON
        """Log the batch and each request, draw each request's fate and answer it now (shown once ended)."""
        n = next(self._ids)
        batch_id = f"msgbatch_sim{n:08d}" if api == "anthropic" else f"batch_sim{n:08d}"
        now = time.time()
        batch = SimBatch(batch_id, api, now, now + self.settings.batch.delay_s, [])
        key_sha = self._key_sha(request)
        for i, (custom_id, body) in enumerate(requests):
            rid = f"{batch_id}_r{i:05d}"
            x = self._draws.random()
            fate = "errored" if x < self.settings.batch.errored else (
                "expired" if x < self.settings.batch.errored + self.settings.batch.expired else None)
            entry = LogEntry(
                request_id=rid, api=api, model=str(body.get("model", "")), arrived=now, status=fate or 200,
                fault=None, input_tokens=0, output_tokens=0, key_sha=key_sha, batch_id=batch_id, custom_id=custom_id,
            )
            if fate is None:
                try:
                    payload, out_tokens = self._answer(self.settings, api, body, rid, call=custom_id)
                except OwnCrash:  # errored here; online, the call is answered as ours (``server.OwnCrash``)
                    entry.status = "errored"
                    batch.entries.append(entry)
                    self._log.append(entry)
                    continue
                usage = payload["usage"]
                entry.input_tokens = usage.get("input_tokens", usage.get("prompt_tokens", 0))
                entry.output_tokens = out_tokens
                batch.answers[custom_id] = payload
            batch.entries.append(entry)
            self._log.append(entry)
        self._batches[batch_id] = batch
        return batch

    def _cancel(self, batch: SimBatch) -> None:
        """Requests not yet ended are canceled (and never billed)."""
        if not batch.ended():
            batch.canceled_at = time.time()
            for entry in batch.entries:
                entry.status = "canceled"

    def _counts(self, batch: SimBatch) -> dict[str, int]:
        statuses = [e.status for e in batch.entries]
        if not batch.ended():
            return {"processing": len(statuses), "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        return {"processing": 0, "succeeded": statuses.count(200), "errored": statuses.count("errored"),
                "canceled": statuses.count("canceled"), "expired": statuses.count("expired")}

    def _page(self, request: web.Request, api: str, after: str | None) -> tuple[list[SimBatch], bool]:
        """One page of ``api``'s batches, newest first, after the batch ``after`` (as both APIs list them)."""
        newest = [b for b in reversed(self._batches.values()) if b.api == api]
        ids = [b.id for b in newest]
        start = ids.index(after) + 1 if after in ids else 0
        limit = max(1, min(int(request.query.get("limit", 20)), 1000))
        return newest[start:start + limit], start + limit < len(newest)

    async def _created(self, batch: SimBatch) -> SimBatch:
        """The batch, once the create call's answer waited ``create_delay_s``."""
        await asyncio.sleep(self.settings.batch.create_delay_s)
        return batch

    async def _get_batches(self, request: web.Request) -> web.Response:
        return web.json_response([
            {"batch_id": b.id, "api": b.api, "created": b.created, "custom_ids": [e.custom_id for e in b.entries]}
            for b in self._batches.values()
        ])

    # Anthropic -----------------------------------------------------------------
    def _anthropic_batch(self, request: web.Request, batch: SimBatch) -> dict[str, Any]:  # free-form: response JSON
        ended = batch.ended()
        end = (batch.canceled_at or batch.ends) if ended else None
        base = f"{request.scheme}://{request.host}"
        return {
            "id": batch.id, "type": "message_batch",
            "processing_status": "ended" if ended else "in_progress",
            "request_counts": self._counts(batch),
            "created_at": _iso(batch.created), "ended_at": _iso(end), "expires_at": _iso(batch.created + 86400),
            "cancel_initiated_at": _iso(batch.canceled_at), "archived_at": None,
            "results_url": f"{base}/v1/messages/batches/{batch.id}/results" if ended else None,
        }

    async def _anthropic_create(self, request: web.Request) -> web.Response:
        body = await request.json()
        requests = [(r.get("custom_id"), r.get("params") or {}) for r in body.get("requests") or []]
        ids = [c for c, _ in requests]
        if not requests or any(not isinstance(c, str) or not c for c in ids) or len(set(ids)) != len(ids):
            return _bad_request("anthropic", "requests must be non-empty, each with a unique custom_id")
        batch = await self._created(self._create(request, "anthropic", requests))
        return web.json_response(self._anthropic_batch(request, batch))

    async def _anthropic_list(self, request: web.Request) -> web.Response:
        page, more = self._page(request, "anthropic", request.query.get("after_id"))
        data = [self._anthropic_batch(request, b) for b in page]
        return web.json_response({"data": data, "has_more": more, "first_id": data[0]["id"] if data else None,
                                  "last_id": data[-1]["id"] if data else None})

    async def _anthropic_retrieve(self, request: web.Request) -> web.Response:
        batch = self._batches.get(request.match_info["id"])
        return _not_found("anthropic", "batch") if batch is None else web.json_response(
            self._anthropic_batch(request, batch))

    async def _anthropic_cancel(self, request: web.Request) -> web.Response:
        batch = self._batches.get(request.match_info["id"])
        if batch is None:
            return _not_found("anthropic", "batch")
        self._cancel(batch)
        return web.json_response(self._anthropic_batch(request, batch))

    async def _anthropic_results(self, request: web.Request) -> web.Response:
        batch = self._batches.get(request.match_info["id"])
        if batch is None or not batch.ended():
            return _not_found("anthropic", "batch results")
        lines = []
        for entry in batch.entries:
            status = entry.status
            if status == 200:
                result: dict[str, Any] = {"type": "succeeded", "message": batch.answers[entry.custom_id]}  # free-form: response JSON
            elif status == "errored":
                result = {"type": "errored", "error": {"type": "error", "request_id": entry.request_id, "error": {
                    "type": "api_error", "message": "simulated batch request error"}}}
            else:
                result = {"type": status}
            lines.append(json.dumps({"custom_id": entry.custom_id, "result": result}))
        return web.Response(body="\n".join(lines) + "\n", content_type="application/binary")

    # OpenAI --------------------------------------------------------------------
    async def _file_create(self, request: web.Request) -> web.Response:
        form = await request.post()
        upload = form.get("file")
        if not isinstance(upload, web.FileField):
            return _bad_request("openai", "file is required")
        data = upload.file.read()
        file_id = f"file-sim{next(self._ids):08d}"
        self._files[file_id] = data
        return web.json_response(self._file_object(file_id, str(form.get("purpose", "batch")), upload.filename))

    def _file_object(self, file_id: str, purpose: str, filename: str) -> dict[str, Any]:  # free-form: response JSON
        return {"id": file_id, "object": "file", "bytes": len(self._files[file_id]), "created_at": int(time.time()),
                "filename": filename or "batch.jsonl", "purpose": purpose, "status": "processed"}

    async def _file_content(self, request: web.Request) -> web.Response:
        data = self._files.get(request.match_info["id"])
        return _not_found("openai", "file") if data is None else web.Response(
            body=data, content_type="application/octet-stream")

    async def _openai_create(self, request: web.Request) -> web.Response:
        body = await request.json()
        data = self._files.get(str(body.get("input_file_id")))
        if data is None:
            return _not_found("openai", "input file")
        if body.get("endpoint") != OPENAI_ENDPOINT:
            return _bad_request("openai", f"the sim serves batches of {OPENAI_ENDPOINT} only")
        try:
            lines = [json.loads(line) for line in data.decode().splitlines() if line.strip()]
        except ValueError:
            return _bad_request("openai", "the input file is not JSONL")
        requests = [(r.get("custom_id"), r.get("body") or {}) for r in lines]
        ids = [c for c, _ in requests]
        if not requests or any(not isinstance(c, str) or not c for c in ids) or len(set(ids)) != len(ids):
            return _bad_request("openai", "each line needs a unique custom_id")
        batch = self._create(request, "openai", requests)
        batch.input_file_id = body["input_file_id"]
        batch.metadata = body.get("metadata")
        return web.json_response(self._openai_batch(await self._created(batch)))

    async def _openai_list(self, request: web.Request) -> web.Response:
        page, more = self._page(request, "openai", request.query.get("after"))
        data = [self._openai_batch(b) for b in page]
        return web.json_response({"object": "list", "data": data, "has_more": more,
                                  "first_id": data[0]["id"] if data else None,
                                  "last_id": data[-1]["id"] if data else None})

    def _openai_batch(self, batch: SimBatch) -> dict[str, Any]:  # free-form: a response body, JSON as sent
        ended = batch.ended()
        if ended and batch.output_file_id is None and batch.error_file_id is None:
            self._write_outputs(batch)
        counts = self._counts(batch)
        status = "cancelled" if batch.canceled_at else ("completed" if ended else "in_progress")
        return {
            "id": batch.id, "object": "batch", "endpoint": OPENAI_ENDPOINT, "completion_window": "24h",
            "input_file_id": batch.input_file_id, "status": status, "created_at": int(batch.created),
            "in_progress_at": int(batch.created), "expires_at": int(batch.created + 86400),
            "completed_at": int(batch.ends) if ended and not batch.canceled_at else None,
            "cancelled_at": int(batch.canceled_at) if batch.canceled_at else None,
            "output_file_id": batch.output_file_id, "error_file_id": batch.error_file_id, "errors": None,
            "metadata": batch.metadata,
            "request_counts": {"total": len(batch.entries), "completed": counts["succeeded"],
                               "failed": counts["errored"] + counts["expired"] + counts["canceled"]},
        }

    def _write_outputs(self, batch: SimBatch) -> None:
        """The output file (successes) and the error file (errored, expired, canceled), as OpenAI writes them."""
        out, err = [], []
        for entry in batch.entries:
            line: dict[str, Any] = {"id": entry.request_id, "custom_id": entry.custom_id}  # free-form: response JSON
            status = entry.status
            if status == 200:
                payload = batch.answers[entry.custom_id]
                out.append(line | {"response": {"status_code": 200, "request_id": entry.request_id,
                                                "body": payload}, "error": None})
            elif status == "errored":
                err.append(line | {"response": {"status_code": 500, "request_id": entry.request_id, "body": {
                    "error": {"message": "simulated batch request error", "type": "server_error"}}}, "error": None})
            else:
                code = "batch_expired" if status == "expired" else "batch_cancelled"
                err.append(line | {"response": None, "error": {"code": code, "message": f"simulated {code}"}})
        for lines, attr in ((out, "output_file_id"), (err, "error_file_id")):
            if lines:
                file_id = f"file-sim{next(self._ids):08d}"
                self._files[file_id] = ("\n".join(json.dumps(x) for x in lines) + "\n").encode()
                setattr(batch, attr, file_id)

    async def _openai_retrieve(self, request: web.Request) -> web.Response:
        batch = self._batches.get(request.match_info["id"])
        return _not_found("openai", "batch") if batch is None else web.json_response(self._openai_batch(batch))

    async def _openai_cancel(self, request: web.Request) -> web.Response:
        batch = self._batches.get(request.match_info["id"])
        if batch is None:
            return _not_found("openai", "batch")
        self._cancel(batch)
        return web.json_response(self._openai_batch(batch))
