"""The cluster's limiter as workers speak to it (real Ray): a process's waiting calls go in shared grants,
a call whose caller gave up gives its slot back, and a restarted actor gets what still waits again."""

from __future__ import annotations

import asyncio
import time
import uuid

import ray

from bargain_ray.clients.limiter import Feedback, Limiter, _actor
from bargain_ray.clients.snapshot import KeySnapshot
from bargain_ray.config import Limits

LIMITS = Limits(max_in_flight=2, requests_per_minute=60_000)
"""Known limits: the window is the whole ``max_in_flight`` from the first call (no slow start)."""


def snapshot(key: str) -> KeySnapshot | None:
    return ray.get(_actor().snapshot.remote()).get(key)


async def settled(key: str, want: dict, seconds: float = 20.0) -> KeySnapshot | None:
    """The key's snapshot once it shows ``want`` (releases reach the actor a moment after they are made)."""
    deadline = time.monotonic() + seconds
    while True:
        snap = snapshot(key)
        if snap and all(getattr(snap, k) == v for k, v in want.items()) or time.monotonic() > deadline:
            return snap
        await asyncio.sleep(0.05)


def test_a_call_whose_caller_gave_up_gives_its_slot_back(ray_session: str) -> None:
    """Five calls of one process, two slots: the third's caller gives up while it waits at the actor. When the
    first two end, the fourth and fifth go (the third's slot, handed out to nobody, comes back)."""
    key = f"test-grants-{uuid.uuid4().hex}"

    async def run() -> tuple[list[int], KeySnapshot | None]:
        limiter = Limiter(key, LIMITS)
        calls = [asyncio.create_task(limiter.acquire(10, 0)) for _ in range(5)]
        held = await settled(key, {"in_flight": 2, "waiting": 3})
        assert held is not None and (held.in_flight, held.waiting) == (2, 3), f"the window is two: {held}"
        await asyncio.wait_for(asyncio.wait(calls[:2]), 20)  # the two handed out reach their callers
        first = [c for c in calls if c.done()]
        assert first == calls[:2], "handed out in the order asked, and no more than the window"
        calls[2].cancel()
        for call in first:
            limiter.release(call.result(), Feedback(status=200))
        rest = await asyncio.wait_for(asyncio.gather(calls[3], calls[4]), 20)
        return rest, await settled(key, {"in_flight": 2, "waiting": 0})

    rest, snap = asyncio.run(run())
    assert len(set(rest)) == 2
    assert snap is not None and snap.in_flight == 2 and snap.waiting == 0, snap


def test_a_restarted_limiter_gets_what_still_waits_again(ray_session: str) -> None:
    """The actor dies with a call waiting in it (one slot, held): once it is back (Ray restarts it, its state
    empty), the waiting call is sent again and goes."""
    key = f"test-restart-{uuid.uuid4().hex}"
    one = Limits(max_in_flight=1, requests_per_minute=60_000)

    async def run() -> int:
        limiter = Limiter(key, one)
        await asyncio.wait_for(limiter.acquire(10, 0), 20)
        waiting = asyncio.create_task(limiter.acquire(10, 0))
        held = await settled(key, {"in_flight": 1, "waiting": 1})
        assert held is not None and (held.in_flight, held.waiting) == (1, 1), f"the slot is held: {held}"
        assert not waiting.done()
        ray.kill(_actor(), no_restart=False)
        return await asyncio.wait_for(waiting, 60)

    assert asyncio.run(run()) > 0
