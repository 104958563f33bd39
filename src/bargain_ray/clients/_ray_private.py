"""Every use this package makes of Ray's private internals, each checked against Ray ``CHECKED``; Ray's public
API everywhere else. It sits in ``clients``, the lowest layer that imports Ray (the limiter reads the job table),
so that ``execution`` imports it from here too.

Nothing of Ray is imported at module level: a private module or name that a newer Ray moved fails the one use that
needs it, never the import of the package, and each use says what that failure costs:

- ``lean_head`` (a new local instance without the processes a run does not use): ``RayInternalsChanged`` before
  anything starts, or, from inside ``ray.init``, an error ``internals_changed`` recognises; the caller then starts
  Ray the standard way, a few seconds slower (``execution.cluster.start_ray``);
- ``dead_jobs`` (the job table): no job reads as ended, and a dead driver's limiter slots wait for their lease;
- ``raylet_socket`` (this node's raylet): None, and the cluster watch asks the GCS alone;
- ``drop_published_errors`` (Ray's printer of the job's errors): Ray prints every notice as it does;
- ``address_file`` (the file ``ray start`` writes): None, and a run starts its own local instance unless
  ``RAY_ADDRESS`` names a cluster;
- ``actor_id`` (an actor's id, read off its handle): None, and the pool asks each runner its id as it starts
  (``execution.pool``);
- ``GCS_METHOD`` and ``WORKER_LOGGER``: names, read by gRPC and logging (see each).
"""

from __future__ import annotations

import functools
import importlib
import inspect
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

CHECKED = "2.60.0"
"""The Ray version every use below was read against (its source) and tested with."""

GCS_METHOD = "/ray.rpc.NodeInfoGcsService/GetClusterId"
"""A method every GCS serves, what ``ray.init`` asks first; an empty message is a valid request (Ray 2.60.0: the
name is in Ray's protobufs, not its Python API). Renamed, a live GCS answers UNIMPLEMENTED and reads as silent."""

WORKER_LOGGER = "ray._private.worker"
"""The logger of Ray's driver-side worker, which logs an error held by an object ref dropped unread (Ray 2.60.0)."""

REGISTER_S = 30.0
"""How long a new local instance's raylet may take to register before Ray's own wait takes over (Ray's: 30 s)."""

LEAN_USES = {
    "ray._private.node": ("Node.start_api_server", "Node.start_ray_processes", "Node.gcs_address", "Node.node_id"),
    "ray._private.services": ("_get_gcs_client_options",),
    "ray._private.state": ("GlobalState._initialize_global_state", "GlobalState.node_table", "GlobalState.disconnect"),
}
"""What the lean start overrides or calls, as Ray 2.60.0 has it (module -> attributes)."""
LEAN_PARAMS = ("dashboard_agent_listen_port", "no_monitor", "include_log_monitor")
"""The ``ray._private.parameter.RayParams`` fields the lean start sets (Ray 2.60.0)."""


class RayInternalsChanged(Exception):
    """A private part of Ray this package uses is not as Ray ``CHECKED`` has it."""


def internals_changed(exc: BaseException) -> bool:
    """Whether ``exc``, raised while Ray started through these internals, says they changed (a name gone, a signature
    changed) rather than that the cluster could not start: a real cluster problem is Ray's own error."""
    return isinstance(exc, RayInternalsChanged | AttributeError | TypeError | ImportError)


def _resolve(module: str, path: str) -> Any:  # free-form: any of Ray's private objects
    try:
        return functools.reduce(getattr, path.split("."), importlib.import_module(module))
    except (ImportError, AttributeError) as exc:
        raise RayInternalsChanged(f"no {module}.{path} ({type(exc).__name__}: {exc})") from exc


def _lean_node() -> tuple[Any, type]:  # free-form: Ray's node module
    """Ray's node module and the lean head's class, once every name it uses is found as Ray 2.60.0 has it."""
    for module, paths in LEAN_USES.items():
        for path in paths:
            _resolve(module, path)
    params = inspect.signature(_resolve("ray._private.parameter", "RayParams")).parameters
    if missing := [name for name in LEAN_PARAMS if name not in params]:
        raise RayInternalsChanged(f"ray._private.parameter.RayParams takes no {', '.join(missing)}")
    node: Any = importlib.import_module("ray._private.node")  # free-form: Ray's private modules, checked above
    services: Any = importlib.import_module("ray._private.services")
    state: Any = importlib.import_module("ray._private.state")

    class LeanHead(node.Node):  # Ray's private Node (typed Any), found above
        """The head node of a local instance started for one run, with only the processes a run uses (ours). Ray
        2.60's ``ray.init`` takes no option for these, and each is on its start-up's path:

        - the dashboard agent's HTTP server binds any free port: Ray's default is the fixed 52365, which any other
          Ray on the machine holds, and ``ray.init`` then waits the ~3.3 s the agent spends retrying it (and it
          serves nothing);
        - no autoscaler monitor (a local instance never scales) and no log monitor (``log_to_driver=False``: nobody
          reads what it forwards), two Python processes of ~0.8 s of CPU each on the start-up's path;
        - no API server: with ``include_dashboard=False`` it serves only usage statistics, and ``ray.init`` waits
          for it to come up (1-1.5 s on 2 cores) before it starts the raylet.
        """

        def __init__(self, ray_params: Any, head: bool = False, *args: Any, **kwargs: Any) -> None:  # Ray's own
            if head:
                ray_params.update(dashboard_agent_listen_port=0, no_monitor=True, include_log_monitor=False)
            super().__init__(ray_params, head, *args, **kwargs)

        def start_api_server(self, *args: Any, **kwargs: Any) -> None:  # Ray's arguments, whatever they become
            """Not started (see the class): Ray's own outcome when it fails to start with the dashboard off."""

        def start_ray_processes(self) -> None:
            """Ray's, then a wait for the raylet to register that asks the GCS every 20 ms: Ray's own wait asks
            once a second (``GlobalStateAccessor::GetNode``), which cost ``ray.init`` 0.5 s on average, up to 1 s."""
            super().start_ray_processes()
            table = state.GlobalState()
            table._initialize_global_state(services._get_gcs_client_options(self.gcs_address))
            until = time.monotonic() + REGISTER_S
            try:
                while time.monotonic() < until and not any(n["NodeID"] == self.node_id and n["Alive"]
                                                           for n in table.node_table()):
                    time.sleep(0.02)
            finally:
                table.disconnect()  # Ray's own wait, next, finds the node at its first ask (or waits as it would)

    return node, LeanHead


@contextmanager
def lean_head() -> Iterator[None]:
    """``ray.init`` inside the block starts a new local instance as the lean head (``ray.init`` looks
    ``ray._private.node.Node`` up as it runs); ``RayInternalsChanged``, before anything starts, if a name it uses
    is not there."""
    node, lean = _lean_node()
    original, node.Node = node.Node, lean
    try:
        yield
    finally:
        node.Node = original


def dead_jobs() -> set[str]:
    """The ids of the cluster's Ray jobs that have ended.

    Ray's public job listing (``ray.util.state``) goes through the dashboard, which our drivers do not start; the
    GCS job table behind it is read through ``ray._private.state.jobs`` (Ray 2.60.0). Should that move, no job
    reads as ended and a dead driver's slots fall back to the limiter's lease.
    """
    try:
        from ray._private import state

        return {job["JobID"] for job in state.jobs() if job.get("IsDead")}
    except Exception:  # an internal API: any change in it must cost the fallback, never a sweep
        return set()


def raylet_socket() -> str | None:
    """This node's raylet socket (``ray._private.worker.global_worker.node.raylet_socket_name``, Ray 2.60.0: Ray
    names it nowhere public); None should that move."""
    try:
        from ray._private import worker

        node = worker.global_worker.node
        return None if node is None else str(node.raylet_socket_name)
    except (ImportError, AttributeError):
        return None


def address_file() -> Path | None:
    """The current-cluster file ``ray start`` writes and ``ray.init()`` with no address reads
    (``ray._common.utils.get_ray_address_file``, Ray 2.60.0); None should that move."""
    try:
        from ray._common.utils import get_ray_address_file

        return Path(get_ray_address_file(None))
    except (ImportError, AttributeError):
        return None


def actor_id(handle: Any) -> str | None:  # free-form: a Ray actor handle
    """The id of the actor behind ``handle``, as the actor's own ``ray.get_runtime_context().get_actor_id()`` gives
    it (``ActorHandle._actor_id``, Ray 2.60.0: a handle gives its id nowhere public); None should that move."""
    try:
        return str(handle._actor_id.hex())
    except AttributeError:
        return None


_DROPPING = "print_to_stdstream_dropping"


def drop_published_errors(drop: re.Pattern[str]) -> None:
    """Leave out of what Ray's driver prints of the errors GCS publishes for the job (as ``(raylet)``) every line
    ``drop`` matches; every other line still prints (idempotent). The printer is Ray's module-level
    ``ray._private.worker.print_to_stdstream``, which its error-listening thread looks up at each message (Ray
    2.60.0)."""
    try:
        from ray._private import worker

        printer = worker.print_to_stdstream
    except (ImportError, AttributeError):
        return
    if printer.__name__ == _DROPPING:  # how a second call knows it is installed already
        return

    def print_to_stdstream(data: dict[str, Any], ignore_prefix: bool) -> None:  # free-form: Ray's log message
        lines = [line for line in data.get("lines", []) if not drop.match(line)]
        if lines:
            printer({**data, "lines": lines}, ignore_prefix)

    print_to_stdstream.__name__ = _DROPPING
    worker.print_to_stdstream = print_to_stdstream
