"""A driver killed outright on a cluster that outlives it, or a game runner its pool retired: the shared limiter gives
their slots back.

The limiter actor is detached (one for the cluster), so a SIGKILLed driver's or runner's calls in flight and its
waiting acquires would hold the window until ``LEASE_S`` (15 minutes) and stall the next driver or runner.
"""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import uuid

import ray

from bargain_ray.clients._ray_private import actor_id
from bargain_ray.clients.limiter import LEASE_S, REAP_S, Limiter, _actor, retire_holder
from bargain_ray.config import Limits
from bargain_ray.core.secrets import environ_without_keys

LIMITS = Limits(max_in_flight=2, requests_per_minute=60_000)
"""Known limits: the window is the whole ``max_in_flight`` at once (no slow start)."""

HOLDER = """
import asyncio, sys
import ray
from bargain_ray.clients.limiter import Limiter, _actor
from bargain_ray.config import Limits

async def main():
    limiter = Limiter(sys.argv[1], Limits.model_validate_json(sys.argv[2]))
    await limiter.acquire(10, 0)
    await limiter.acquire(10, 0)
    waiting = asyncio.ensure_future(limiter.acquire(10, 0))  # queued behind the full window
    while (await _actor().snapshot.remote())[sys.argv[1]].waiting < 1:  # until it waits at the limiter
        await asyncio.sleep(0.05)
    print("held", flush=True)
    await waiting

ray.init(address=sys.argv[3], log_to_driver=False)
asyncio.run(main())
"""


async def acquire_within(limiter: Limiter, seconds: float) -> bool:
    try:
        await asyncio.wait_for(limiter.acquire(10, 0), seconds)
    except TimeoutError:
        return False
    return True


def test_a_killed_drivers_slots_and_waiters_are_freed_for_the_next(ray_session: str) -> None:
    key = f"test-dead-job-{uuid.uuid4().hex}"
    env = environ_without_keys()
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, key, LIMITS.model_dump_json(), ray_session],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held", holder.stderr
        limiter = Limiter(key, LIMITS)
        assert not asyncio.run(acquire_within(limiter, 1.0))  # the window really is full: this test can fail
        holder.send_signal(signal.SIGKILL)
        holder.wait(30)
        # within a few reaping rounds, far inside the 15-minute lease: our call goes
        assert asyncio.run(acquire_within(limiter, 10 * REAP_S)), "a killed driver's slots still held"
        assert 10 * REAP_S < LEASE_S
        snap = ray.get(_actor().snapshot.remote())[key]
        # ours (the call that went, and the one the 1 s probe left), none of the dead driver's
        assert snap.waiting == 0 and snap.in_flight <= 2, snap
    finally:
        if holder.poll() is None:
            holder.kill()


@ray.remote(num_cpus=0)
class Runner:
    """A game runner's process as the limiter sees it: its calls held under its holder id."""

    def __init__(self, key: str, limits: Limits) -> None:
        self.limiter = Limiter(key, limits)
        self.calls: list[asyncio.Future[int]] = []

    async def ask(self, n: int, going: int) -> None:
        """Ask for ``n`` calls; return once ``going`` of them went (the rest wait at the limiter)."""
        self.calls = [asyncio.ensure_future(self.limiter.acquire(10, 0)) for _ in range(n)]
        while sum(call.done() for call in self.calls) < going:
            await asyncio.wait([c for c in self.calls if not c.done()], return_when=asyncio.FIRST_COMPLETED)

    async def outcomes(self) -> list[str]:
        """How each call ended: ``went``, or the name of what it raised."""
        await asyncio.wait(self.calls)
        return ["went" if c.exception() is None else type(c.exception()).__name__ for c in self.calls]


def test_a_retired_runners_slots_are_freed_at_once_and_none_of_its_calls_goes_after(ray_session: str) -> None:
    """The runner holds the whole window and has a call queued behind it; a call of another process waits. Retired
    (its pool noticed it lost), its slots go to that call at once and its queued call is refused, as is any later."""
    key = f"test-retired-{uuid.uuid4().hex}"
    runner = Runner.remote(key, LIMITS)
    ray.get(runner.ask.remote(3, going=2), timeout=60)
    limiter = Limiter(key, LIMITS)
    assert not asyncio.run(acquire_within(limiter, 1.0))  # the window really is full: this test can fail
    retire_holder(actor_id(runner))
    assert asyncio.run(acquire_within(limiter, 30.0)), "a retired runner's slots still held"
    assert ray.get(runner.outcomes.remote(), timeout=30) == ["went", "went", "Retired"]
    ray.get(runner.ask.remote(1, going=1), timeout=30)
    assert ray.get(runner.outcomes.remote(), timeout=30) == ["Retired"], "a retired runner sends nothing more"
    snap = ray.get(_actor().snapshot.remote())[key]
    # ours (the call that went, and the one the 1 s probe left), none of the retired runner's
    assert snap.waiting == 0 and snap.in_flight <= 2, snap
    ray.kill(runner)
