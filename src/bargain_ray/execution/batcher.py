"""One batcher per sweep: requests of one (provider, key, model) from every worker on every node go out as one batch.

Games advance in lockstep, so each turn's requests to one model arrive together: the batcher holds
them until ``run.batch.max_requests`` wait or ``run.batch.max_wait_s`` passed since the first, sends
them as one batch, journals the batch (id and call ids, through ``store.batches``) the moment the
provider accepted it, polls it, and hands each caller its own result. It is an async Ray actor
(``num_cpus=0``) pinned to the driver's node, so it alone writes the batch journal.

On resume a call whose id and request are in a journaled batch waits for that batch's results (the
provider keeps them for days) instead of being sent again; replies already in the call journal never
reach it. So does a call sent again in the same run (its game's runner was lost): it waits for the batch
it is already in. Errored or expired requests go back to the caller, which retries them online
(``clients.batches.BatchedClient``).

Before each create call the batch's intent (a fresh key, its call ids) is journaled, so a batcher killed while the
provider accepts a batch never creates it again: the next one finds the batch at the provider (by the key OpenAI
keeps in the batch's metadata; for Anthropic, among the batches of that size created since, by its results' custom
ids once it ended) and collects it, or, found nowhere, sends its calls anew. The same look-up follows a create call
that failed, which may have been accepted all the same (a timeout, a lost connection).

Ray restarts the batcher when its process dies: its state is the batch journal, read again, and each
request in flight to it is retried on the new one, which collects the batches already created. A batcher
gone for good fails its callers' games (``lost_batcher``) and the run stops: its calls never go online
at full price.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
from tqdm import tqdm

from bargain_ray.clients import BatchAPI, BatchedClient, BatchResult, BatchRoute, HTTPClient, ModelClient, batch_client
from bargain_ray.clients.batches import custom_id
from bargain_ray.clients.limiter import NAMESPACE
from bargain_ray.config import BatchRun, ModelConfig
from bargain_ray.core.errors import FailureKind
from bargain_ray.core.hashing import digest
from bargain_ray.design import ResolvedSweep
from bargain_ray.execution.calljournal import lost
from bargain_ray.execution.journal_actor import RESTARTS
from bargain_ray.store.batches import BatchIntent, JournaledBatch, NoBatch, batches_journal_path, read_batch_journal
from bargain_ray.store.jsonl import Appender


def batching(sweep: ResolvedSweep) -> bool:
    """Whether any model of the sweep, as this run calls it, sends through a batch API."""
    return any(sweep.sends_batched(model) for model in sweep.models.values())


def batcher_name() -> str:
    """The batcher of this driver's job: workers are actors of the same job, so they find it by this name."""
    return f"bargain_ray_batcher_{ray.get_runtime_context().get_job_id()}"


class Batcher:
    """Gathers requests per route, sends them as batches, journals each batch, routes results back."""

    def __init__(self, sweep_dir: str, settings: BatchRun) -> None:
        path = Path(sweep_dir)
        self.settings = settings
        self.journaled: dict[str, JournaledBatch] = {}
        """call_id -> the batch that holds its request: journaled before this batcher started, or sent by it."""
        self.intended: dict[str, BatchIntent] = {}
        """call_id -> the open intent that holds its request: a batch maybe created, not journaled."""
        journal = read_batch_journal(path)
        for batch in journal.batches:
            self._holds(batch)
        for intent in journal.open:
            self.intended.update(dict.fromkeys(intent.calls, intent))
        self.journal = Appender(batches_journal_path(path))
        self.finding: dict[str, asyncio.Task[str | None]] = {}
        """intent -> the batch it created, looked up at the provider once, whoever waits on it."""
        self.apis: dict[str, BatchAPI] = {}
        self.waiting: dict[str, list[tuple[str, dict[str, Any], asyncio.Future[BatchResult]]]] = {}  # free-form: request JSON
        self.collecting: dict[str, asyncio.Task[dict[str, BatchResult]]] = {}
        """batch_id -> its results once it ended: one poll per batch, whoever waits on it."""
        self.sent = 0

    def _holds(self, batch: JournaledBatch) -> None:
        for call_id in batch.calls:
            self.journaled[call_id] = batch

    def _api(self, route: BatchRoute) -> BatchAPI:
        if route.key not in self.apis:
            self.apis[route.key] = batch_client(route)
        return self.apis[route.key]

    async def submit(self, route: BatchRoute, body: dict[str, Any], call_id: str) -> BatchResult:  # free-form: request JSON
        """This request's result once its batch ended (a journaled batch's, if it holds this very request)."""
        old = self.journaled.get(call_id)
        if old is not None and old.route == route.key and old.calls[call_id] == digest(body):
            return await self._result(old.batch_id, route, call_id)
        intent = self.intended.get(call_id)
        if intent is not None and intent.route == route.key and intent.calls[call_id] == digest(body):
            batch_id = await self._found(intent, route)
            if batch_id is not None:
                return await self._result(batch_id, route, call_id)
        future: asyncio.Future[BatchResult] = asyncio.get_running_loop().create_future()
        queue = self.waiting.setdefault(route.key, [])
        queue.append((call_id, body, future))
        if len(queue) >= self.settings.max_requests:
            self._flush(route)
        elif len(queue) == 1:
            asyncio.get_running_loop().call_later(self.settings.max_wait_s, self._flush_if, route, future)
        return await future

    def _flush_if(self, route: BatchRoute, first: asyncio.Future[BatchResult]) -> None:
        """The wait of the queue whose first request is ``first`` is over (unless it was sent already)."""
        queue = self.waiting.get(route.key)
        if queue and queue[0][2] is first:
            self._flush(route)

    def _flush(self, route: BatchRoute) -> None:
        items = self.waiting.pop(route.key, [])
        if items:
            asyncio.get_running_loop().create_task(self._send(route, items))

    async def _send(self, route: BatchRoute, items: list[tuple[str, dict[str, Any], asyncio.Future[BatchResult]]]) -> None:  # free-form: request JSON
        api = self._api(route)
        requests = {call_id: body for call_id, body, _ in items}
        intent = BatchIntent(intent=uuid.uuid4().hex, api=route.api, route=route.key, created=time.time(),
                             calls={call_id: digest(body) for call_id, body in requests.items()})
        self.journal.append([intent])  # fsynced before the provider can accept (and bill) the batch
        try:
            batch_id = await api.create({custom_id(c): body for c, body in requests.items()}, intent.intent)
        except Exception as exc:  # noqa: BLE001 - masked (``BatchAPI``); accepted all the same? look it up
            failed = f"{type(exc).__name__}: {str(exc)[:200]}"
            try:
                found = await self._find(intent, route, f"create failed: {failed}")
            except Exception:  # noqa: BLE001 - the look-up failed too: the intent stays open for the next batcher
                found = None
            if found is None:  # nothing was accepted, so nothing is paid: the callers go online
                for _, _, future in items:
                    future.set_result(BatchResult("", error=f"batch not created: {failed}"))
                return
            batch_id = found
        else:
            self._journal_batch(intent, batch_id)
        self.sent += 1
        for call_id, _, future in items:
            future.set_result(await self._result(batch_id, route, call_id))

    def _journal_batch(self, intent: BatchIntent, batch_id: str) -> None:
        batch = JournaledBatch(batch_id=batch_id, api=intent.api, route=intent.route, created=intent.created,
                               calls=intent.calls, intent=intent.intent)
        self.journal.append([batch])
        self._holds(batch)

    def _found(self, intent: BatchIntent, route: BatchRoute) -> asyncio.Task[str | None]:
        if intent.intent not in self.finding:
            self.finding[intent.intent] = asyncio.create_task(self._find(intent, route, "no batch at the provider"))
        return self.finding[intent.intent]

    async def _find(self, intent: BatchIntent, route: BatchRoute, why: str) -> str | None:
        """The batch ``intent`` created, journaled now, or None (journaled too: its calls are sent anew).

        A candidate is the intent's only if its results hold exactly the intent's custom ids, so this waits for the
        candidates to end (as the calls would wait for their batch). A look-up that fails leaves the intent open."""
        wanted = {custom_id(call_id) for call_id in intent.calls}
        known = {batch.batch_id for batch in self.journaled.values()}
        for batch_id in await self._api(route).find(intent.intent, len(wanted), intent.created):
            if batch_id not in known and set(await self._results(batch_id, route)) == wanted:
                self._journal_batch(intent, batch_id)
                return batch_id
        self.journal.append([NoBatch(intent=intent.intent, reason=why)])
        for call_id in intent.calls:
            self.intended.pop(call_id, None)
        return None

    async def _result(self, batch_id: str, route: BatchRoute, call_id: str) -> BatchResult:
        results = await self._results(batch_id, route)
        return results.get(custom_id(call_id)) or BatchResult(batch_id, error="not in the batch's results")

    def _results(self, batch_id: str, route: BatchRoute) -> asyncio.Task[dict[str, BatchResult]]:
        if batch_id not in self.collecting:
            self.collecting[batch_id] = asyncio.create_task(self._collect(batch_id, self._api(route)))
        return self.collecting[batch_id]

    async def _collect(self, batch_id: str, api: BatchAPI) -> dict[str, BatchResult]:
        """Poll until the batch ended, then read its results; a batch that cannot be read fails its requests."""
        try:
            while not await api.ended(batch_id):
                await asyncio.sleep(self.settings.poll_s)
            return await api.results(batch_id)
        except Exception as exc:  # noqa: BLE001 - reads were retried; the callers go online
            tqdm.write(f"batch {batch_id} could not be read ({type(exc).__name__}); its requests go online")
            return {}

    def batches_sent(self) -> int:
        return self.sent

    async def close(self) -> None:
        for api in self.apis.values():
            await api.close()
        self.journal.close()


def start_batcher(sweep: ResolvedSweep, sweep_dir: Path) -> Any:
    """The sweep's batcher, on this (the driver's) node, named for this job; restarted there when its process dies
    (``RESTARTS`` times), and every request in flight to it retried on the new one."""
    node = ray.get_runtime_context().get_node_id()
    remote = ray.remote(num_cpus=0, max_concurrency=100_000, max_restarts=RESTARTS, max_task_retries=-1)(Batcher).options(  # type: ignore[call-overload]  # Ray's overloads name no actor option
        name=batcher_name(), namespace=NAMESPACE,
        scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=node, soft=False),
    )
    return remote.remote(str(sweep_dir.resolve()), sweep.run.batch)


def batched_clients(sweep: ResolvedSweep) -> Callable[[ModelConfig, ModelClient], ModelClient] | None:
    """For a worker's ``ClientPool``: wraps each batched model's client to send through the sweep's batcher."""
    if not batching(sweep):
        return None
    handle: list[Any] = []

    async def submit(route: BatchRoute, body: dict[str, Any], call_id: str) -> BatchResult:  # free-form: request JSON
        try:
            if not handle:
                handle.append(ray.get_actor(batcher_name(), namespace=NAMESPACE))
        except ValueError:  # no actor of that name: gone for good
            raise lost(FailureKind.LOST_BATCHER) from None
        try:
            return await handle[0].submit.remote(route, body, call_id)
        except ray.exceptions.RayActorError:
            raise lost(FailureKind.LOST_BATCHER) from None

    def wrap(model: ModelConfig, client: ModelClient) -> ModelClient:
        if sweep.sends_batched(model) and isinstance(client, HTTPClient) and client.batch_api:
            return BatchedClient(client, submit)
        return client

    return wrap
