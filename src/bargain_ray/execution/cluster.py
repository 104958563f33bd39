"""Which Ray a run uses, decided once; joining or starting it with no API key in any process Ray starts; and a watch
that ends the run within seconds when that cluster is lost.

Ray's own discovery, as ``ray.init()`` does it:
``RAY_ADDRESS`` if set, else the address ``ray start`` wrote in ``ray_current_cluster`` under Ray's temp dir
(``$RAY_TMPDIR``, else ``$TMPDIR``, else ``/tmp``, then ``ray/``), else a new local instance. A cluster killed
without ``ray stop`` leaves that file behind, and ``ray.init`` then retries its dead GCS for minutes in C++ code
where no signal handler runs; so the address is asked first, for ``run.ray_timeout_s``, and a silent one is a
one-line error naming it and how to clear it.
"""

from __future__ import annotations

import logging
import os
import re
import socket
import sys
import threading
import time
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager, nullcontext
from typing import Literal

import grpc
import ray
from pydantic import BaseModel, ConfigDict
from tqdm import tqdm

from bargain_ray.clients._ray_private import (
    CHECKED,
    GCS_METHOD,
    WORKER_LOGGER,
    address_file,
    drop_published_errors,
    internals_changed,
    lean_head,
    raylet_socket,
)
from bargain_ray.config import RunConfig
from bargain_ray.core.secrets import is_key
from bargain_ray.core.status import ExitCode

How = Literal["env", "local", "new", "process"]
"""Joined ``RAY_ADDRESS``; joined the running local cluster ``ray start`` recorded; started a local instance; or
this process had Ray already (a caller's ``ray.init``, the tests' session)."""

WATCH_EVERY_S = 1.0


class RayChoice(BaseModel):
    """Which Ray this run uses and where it is."""

    model_config = ConfigDict(frozen=True)

    how: How
    address: str | None = None
    file: str | None = None
    """The current-cluster file that named ``address`` (``how="local"``)."""

    def describe(self) -> str:
        """The plan line's words for it (said before Ray is up, hence the present tense)."""
        return {
            "env": f"joining RAY_ADDRESS={self.address}",
            "local": f"joining the running local cluster at {self.address} (named in {self.file})",
            "new": "starting a local instance",
            "process": f"this process's Ray at {self.address}",
        }[self.how]

    def where(self) -> str:
        return {
            "env": f"the Ray cluster at RAY_ADDRESS={self.address}",
            "local": f"the local Ray cluster at {self.address} (named in {self.file})",
            "new": "a local Ray instance",
            "process": f"this process's Ray at {self.address}",
        }[self.how]

    def clear(self) -> str:
        """What to do when it does not answer."""
        if self.how == "env":
            return "start it or correct the address, or unset RAY_ADDRESS to start a local instance"
        if self.how == "local":
            return (f"it stopped without `ray stop`: delete {self.file} (or run `ray stop`) and run the same command "
                    "again to start a local instance")
        return "free what the error names (disk, memory, ports) and run the same command again"


class ClusterUnavailable(Exception):
    """The Ray this run chose does not answer, or could not be joined or started: one line, exit 69."""

    def __init__(self, choice: RayChoice, why: str) -> None:
        super().__init__(f"{choice.where()} {why}; {choice.clear()}")


def choose_ray(timeout_s: float) -> RayChoice:
    """The one decision of which Ray a run uses, checked: an address to join must answer within ``timeout_s``,
    else ``ClusterUnavailable`` (before anything is started or spent)."""
    if ray.is_initialized():
        return RayChoice(how="process", address=ray.get_runtime_context().gcs_address)
    env = os.environ.get("RAY_ADDRESS", "")
    if env == "local":
        choice = RayChoice(how="new")
    elif env:
        choice = RayChoice(how="env", address=env)
    else:
        file = address_file()
        recorded = file.read_text().strip() if file is not None and file.is_file() else ""
        choice = RayChoice(how="local", address=recorded, file=str(file)) if recorded else RayChoice(how="new")
    if choice.how in ("env", "local") and not answers(choice.address or "", timeout_s):
        raise ClusterUnavailable(choice, f"does not answer within {timeout_s:g} s (run.ray_timeout_s)")
    return choice


def host_port(address: str) -> tuple[str, int] | None:
    """``host:port`` of a GCS or Ray Client address (``ray://host:port``); None for what names no port (``auto``)."""
    host, _, port = address.split("://", 1)[-1].rpartition(":")
    return (host.strip("[]"), int(port)) if host and port.isdigit() else None


A_GCS = (grpc.StatusCode.OK, grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED)
"""Answers only a GCS gives it (one with token auth refuses a caller without the token: still a GCS)."""


def answers(address: str, timeout_s: float) -> bool:
    """Whether a Ray GCS answers at ``address`` within ``timeout_s`` (a Ray Client server: whether it takes a
    gRPC connection). A dead one, a stopped one, or some other server on the port (a proxy's 404) does not."""
    target = host_port(address)
    if target is None:
        return True  # nothing to ask: Ray resolves it (``auto``)
    with grpc.insecure_channel(f"{target[0]}:{target[1]}") as channel:
        try:
            if address.startswith("ray://"):
                grpc.channel_ready_future(channel).result(timeout=timeout_s)
            else:
                channel.unary_unary(GCS_METHOD)(b"", timeout=timeout_s, wait_for_ready=True)
        except grpc.FutureTimeoutError:
            return False
        except grpc.RpcError as exc:
            return exc.code() in A_GCS
    return True


@contextmanager
def without_keys(names: Collection[str] = ()) -> Iterator[None]:
    """``os.environ`` without ``names`` and every ``*_API_KEY`` variable for the length of the block, then restored.

    A process started inside the block (Ray's GCS, raylet, dashboard agents and, through the raylet, every
    worker) inherits no key; this process keeps its keys, which the driver hands to the actors that call
    providers as actor arguments (``providers.key_env_vars``).
    """
    taken = {n: os.environ.pop(n) for n in list(os.environ) if is_key(n, names)}
    try:
        yield
    finally:
        os.environ.update(taken)


class _QuietDroppedRefs(logging.Filter):
    """Ray logs an error held by an object ref dropped unread ("Unhandled error") when the ref is collected; the
    driver drops its in-flight batches on purpose when it stops (a signal, the budget, a full disk, a lost actor),
    and their errors are what the stop caused, so they are not printed over the run's last line."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("Unhandled error")


RETRY_NOTICE = re.compile(r"^Task \S+ failed\. There are (infinite|\d+) retries remaining, so the task will be retried\.")
"""What Ray's driver prints (as ``(raylet)``, from the errors GCS publishes for the job) each time it retries a task
of a lost actor: a notice, not an error. The retry then succeeds, or the loss reaches the driver, whose summary
names it; printed as it arrives, the notice lands after that summary."""


def quiet_ray_logs() -> None:
    """Keep Ray's driver-side logging to what the run's own lines do not already say (idempotent)."""
    worker = logging.getLogger(WORKER_LOGGER)
    if not any(isinstance(f, _QuietDroppedRefs) for f in worker.filters):
        worker.addFilter(_QuietDroppedRefs())
    drop_published_errors(RETRY_NOTICE)


class _Init:
    """One ``ray.init`` in a thread of its own, which then waits for as long as the process lives: Ray starts its GCS
    and raylet with ``PR_SET_PDEATHSIG``, which the kernel fires when the *thread* that started them ends (so what an
    attempt that failed had started ends with its thread)."""

    def __init__(self, choice: RayChoice, lean: bool) -> None:
        self.failed: Exception | None = None
        self._done = threading.Event()
        threading.Thread(target=self._run, args=(choice, lean), name="bargain-ray-init", daemon=True).start()

    def _run(self, choice: RayChoice, lean: bool) -> None:
        try:  # "local" starts a new instance even if a current-cluster file appeared since the choice
            with lean_head() if lean else nullcontext():
                ray.init(address="local" if choice.how == "new" else None, log_to_driver=False,
                         include_dashboard=False, logging_level=logging.ERROR)
        except Exception as exc:  # handed to the main thread, which says it in one line
            self.failed = exc
        self._done.set()
        if self.failed is None:
            threading.Event().wait()  # the processes it started live while this thread does

    def outcome(self) -> Exception | None:
        """What ``ray.init`` raised, once it returned (interruptible: a signal's handler runs here)."""
        while not self._done.wait(0.1):
            pass
        return self.failed


def first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def standard_start_line(exc: BaseException) -> str:
    """The one line of a run whose lean start of a local instance met Ray internals other than those checked."""
    return (f"ray: the lean start of a local instance failed on Ray {ray.__version__}'s internals (checked against "
            f"{CHECKED}): {type(exc).__name__}: {first_line(exc)}; starting it the standard way, a few seconds slower")


def start_ray(choice: RayChoice, keys: Collection[str] = (), meanwhile: Callable[[], object] | None = None) -> None:
    """Join or start Ray as ``choice`` says, its processes carrying no API key (``keys`` names key variables beyond
    the ``*_API_KEY`` ones: a model's own ``api_key_env``); this is the one place Ray is started. ``meanwhile`` runs
    on this thread while Ray starts (the sweep's simulated provider or local model: they start in parallel), with
    no key in the environment either.

    A new local instance starts lean (``lean_head``, through Ray's private internals); should those not be as
    checked, it starts the standard way after one line saying so. ``ray.init`` runs in a thread the main thread
    waits on (``_Init``), so SIGINT/SIGTERM still reach the main thread's handlers while it blocks (in C++ code,
    where none runs), and Ray leaves the SIGTERM handler alone (it sets its own only from the main thread).
    """
    quiet_ray_logs()
    if choice.how == "process":
        if meanwhile is not None:
            with without_keys(keys):
                meanwhile()
        return
    with without_keys(keys):
        lean = choice.how == "new"
        init = _Init(choice, lean)
        if meanwhile is not None:  # what it raises (a signal's handler too) ends the command at once, as below
            meanwhile()
        failed = init.outcome()
        if failed is not None and lean and internals_changed(failed):
            tqdm.write(standard_start_line(failed), file=sys.stderr)
            failed = _Init(choice, lean=False).outcome()
    if failed is not None:
        raise ClusterUnavailable(choice, f"could not be {'started' if choice.how == 'new' else 'joined'}: "
                                         f"{first_line(failed)}")


def ensure_ray(keys: Collection[str] = ()) -> RayChoice:
    """Ray for a caller that needs it before any sweep (the benchmarks): as ``choose_ray`` decides, with the
    default ``run.ray_timeout_s``, started by ``start_ray``."""
    choice = choose_ray(RunConfig().ray_timeout_s)
    start_ray(choice, keys)
    return choice


def lost_line(choice: RayChoice, timeout_s: float) -> str:
    """The one line of a run whose cluster stopped answering."""
    where = "the local Ray instance this run started" if choice.how == "new" else f"the Ray cluster at {choice.address}"
    again = "run the same command again to resume" + (" (it starts a new local instance)" if choice.how == "new"
                                                      else " once it answers again")
    return (f"error: {where} was lost (its GCS or this node's raylet did not answer for {timeout_s:g} s); the run "
            f"stopped and every result already journaled is kept: {again}")


def _alive(gcs: tuple[str, int] | None, raylet: str | None) -> bool:
    """This node's raylet takes a connection on its socket and the GCS on its port (a dead process refuses both)."""
    try:
        if raylet is not None:
            with socket.socket(socket.AF_UNIX) as s:
                s.settimeout(WATCH_EVERY_S)
                s.connect(raylet)
        if gcs is not None:
            socket.create_connection(gcs, timeout=WATCH_EVERY_S).close()
    except OSError:
        return False
    return True


@contextmanager
def watch_cluster(choice: RayChoice, timeout_s: float) -> Iterator[None]:
    """While the block runs, ask every second whether the cluster answers; one silent for ``timeout_s`` ends the
    process with ``lost_line`` and exit 69, from the watching thread: the driver's own Ray calls would block for a
    minute and end in exit 1. Nothing is lost: the journals are fsynced per write. A Ray this process had before
    the run (``how="process"``) is its owner's to watch; a Ray Client connection (``ray://``) reconnects on its own."""
    if choice.how == "process" or (choice.address or "").startswith("ray://"):
        yield
        return
    gcs = host_port(ray.get_runtime_context().gcs_address)
    raylet = raylet_socket()
    done = threading.Event()

    def watch() -> None:
        silent_since: float | None = None
        while not done.wait(WATCH_EVERY_S):
            if _alive(gcs, raylet):
                silent_since = None
                continue
            silent_since = silent_since or time.monotonic()
            if time.monotonic() - silent_since >= timeout_s and not done.is_set():
                tqdm.write(lost_line(choice, timeout_s), file=sys.stderr)
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(ExitCode.CLUSTER_UNAVAILABLE)

    thread = threading.Thread(target=watch, name="bargain-ray-watch", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
