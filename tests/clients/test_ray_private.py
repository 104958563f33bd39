"""Ray's private internals behind one seam (``clients._ray_private``): with the modules it uses gone, the package
still imports and each use degrades as it says; a lean start whose names or fields are not there is refused before
anything starts, and only such errors count as Ray's internals having changed; a runner's id is read off its handle,
and with a handle that does not give it the pool still retires a runner under its id. (A sweep that falls back to
the standard start: ``tests/execution/test_cluster.py``.)"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import uuid

import pytest
import ray
import ray._private.parameter

from bargain_ray.clients._ray_private import LEAN_USES, RayInternalsChanged, actor_id, internals_changed, lean_head
from bargain_ray.clients.limiter import Limiter, _actor
from bargain_ray.config import Limits
from bargain_ray.design import load_config
from bargain_ray.execution import pool as pools
from bargain_ray.execution.worker import GameRunner

GONE = [*LEAN_USES, "ray._private.parameter", "ray._private.worker", "ray._common.utils"]
"""Every private module the seam imports."""


def test_with_the_private_modules_gone_the_package_imports_and_each_use_degrades() -> None:
    code = "\n".join([
        "import sys, ray", *(f"sys.modules[{m!r}] = None" for m in GONE),
        "import bargain_ray.execution.sweep",
        "from bargain_ray.clients._ray_private import RayInternalsChanged, dead_jobs, lean_head, raylet_socket",
        "from bargain_ray.execution.cluster import choose_ray, quiet_ray_logs",
        "quiet_ray_logs()",
        "try:",
        "    lean_head().__enter__()",
        "except RayInternalsChanged as exc:",
        "    print(exc)",
        "print(choose_ray(5.0).how, dead_jobs(), raylet_socket())",
    ])
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines() == [
        "no ray._private.node.Node.start_api_server (ModuleNotFoundError: import of ray._private.node halted; None in "
        "sys.modules)",
        "new set() None",  # no current-cluster file to read: a new local instance; no job ended; no raylet to watch
    ], done.stdout


def test_a_lean_start_whose_fields_ray_no_longer_takes_is_refused_before_anything_starts(monkeypatch) -> None:
    class Reworked(ray._private.parameter.RayParams):  # as a newer Ray may take its parameters
        def __init__(self, **options: object) -> None:
            super().__init__(**options)

    monkeypatch.setattr(ray._private.parameter, "RayParams", Reworked)
    with pytest.raises(RayInternalsChanged) as refused, lean_head():
        pytest.fail("the lean start went ahead")
    assert str(refused.value) == ("ray._private.parameter.RayParams takes no dashboard_agent_listen_port, no_monitor, "
                                  "include_log_monitor")
    assert internals_changed(refused.value)


@pytest.mark.parametrize(("error", "changed"), [
    (TypeError("start_api_server() got an unexpected keyword argument 'port'"), True),
    (AttributeError("module 'ray._private.services' has no attribute 'start_api_server'"), True),
    (ImportError("cannot import name 'GlobalState'"), True),
    (Exception("The current node timed out during startup."), False),
    (OSError("validate_socket_filename failed: AF_UNIX path length cannot exceed 107 bytes"), False),
    (RuntimeError("Failed to start GCS"), False),
])
def test_only_errors_of_names_and_signatures_count_as_rays_internals_having_changed(error: Exception,
                                                                                    changed: bool) -> None:
    assert internals_changed(error) is changed


LIMITS = Limits(max_in_flight=2, requests_per_minute=60_000)
"""Known limits: the window is the whole ``max_in_flight`` at once (no slow start)."""


@pytest.mark.parametrize("handle_gives_id", [True, False])
def test_a_retired_runners_slots_are_freed_whether_or_not_its_handle_gives_its_id(ray_session: str, monkeypatch,
                                                                                 handle_gives_id: bool) -> None:
    class HoldingRunner(GameRunner):  # defined here: Ray's workers take it by value (they cannot import this file)
        """A game runner that takes the whole window of a key at the cluster's limiter, as its games' calls would."""

        async def hold(self, key: str) -> str:
            limiter = Limiter(key, LIMITS)
            await limiter.acquire(10, 0)
            await limiter.acquire(10, 0)
            return ray.get_runtime_context().get_actor_id()

    if not handle_gives_id:  # as a Ray whose handles no longer have the private ``_actor_id``
        monkeypatch.delattr(ray.actor.ActorHandle, "_actor_id")
    key = f"test-holder-{uuid.uuid4().hex}"
    pool = pools.WorkerPool(load_config("demo", ["grid.blocks=1"]).model_dump(mode="json"), None, {}, 1,
                            runner=ray.remote(num_cpus=0)(HoldingRunner))
    runner = pool.workers[0]
    own_id = ray.get(runner.hold.remote(key), timeout=60)
    assert actor_id(runner) == (own_id if handle_gives_id else None)
    assert ray.get(_actor().snapshot.remote())[key].in_flight == 2  # the runner holds the whole window
    pool.close(clean=False)  # the runner ended and retired under its id
    asyncio.run(asyncio.wait_for(Limiter(key, LIMITS).acquire(10, 0), 60))  # a slot is free long before its lease
