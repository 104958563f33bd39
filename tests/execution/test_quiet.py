"""Quiet stops: what a stop leaves behind prints nothing over the run's last line (no Ray "Unhandled error" dump
for a dropped in-flight batch, no traceback from the simulated provider for a client the stop ended)."""

from __future__ import annotations

import json
import logging
import socket
import threading
import time
import urllib.request

import ray
import ray._private.worker

from bargain_ray.config import compose_dict
from bargain_ray.design import resolve
from bargain_ray.execution.cluster import quiet_ray_logs
from bargain_ray.providers import provider_service


@ray.remote(num_cpus=0)
class Slow:
    def ready(self) -> bool:
        return True

    def fail_later(self, started: float) -> None:
        time.sleep(max(0.0, started + 0.5 - time.time()))
        raise RuntimeError("what the stop caused")


class Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def test_an_error_held_by_a_dropped_in_flight_ref_is_not_printed(ray_session, monkeypatch) -> None:
    """The driver drops its in-flight batches when it stops; Ray reports their errors when they arrive, through
    the logger whose handler prints to the terminal."""
    reported = threading.Event()
    handler = ray._private.worker._unhandled_error_handler

    def seen(exc: Exception) -> None:
        handler(exc)
        reported.set()

    monkeypatch.setattr(ray._private.worker, "_unhandled_error_handler", seen)
    printed = Records()
    ray._private.worker.logger.addHandler(printed)
    try:
        quiet_ray_logs()
        actor = Slow.remote()
        ray.get(actor.ready.remote())
        ref = actor.fail_later.remote(time.time())
        del ref  # dropped while in flight
        assert reported.wait(60), "Ray reported the dropped ref's error"
        ray.kill(actor)
    finally:
        ray._private.worker.logger.removeHandler(printed)
    assert not printed.messages, printed.messages


def test_a_client_that_vanishes_mid_request_prints_no_traceback_from_the_simulated_provider(caplog) -> None:
    """aiohttp logs it with the traceback (to stderr through logging's last resort; under pytest, to caplog)."""
    sweep = resolve(compose_dict("config", ["+grid=c3_smoke", "provider=sim"]))
    with provider_service(sweep) as served:
        url = served.provider.settings.base_url
        host, port = url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port))) as client:  # a worker killed while sending its request
            client.sendall(b"POST /v1/messages HTTP/1.1\r\nHost: sim\r\nContent-Type: application/json\r\n"
                           b"Content-Length: 1000\r\n\r\n{\"model\":")
            time.sleep(0.2)
            client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")  # RST
        with urllib.request.urlopen(f"{url}/sim/log", timeout=30) as answer:  # served after the reset was handled
            log = json.loads(answer.read())
    assert log == [], "the cut request never reached the simulated provider's handler"
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR], caplog.text


def test_ray_retry_notices_are_not_printed_its_other_errors_are(ray_session, capfd) -> None:
    """Ray prints each error GCS publishes for the job (as ``(raylet)``); a lost actor's retried tasks publish a notice
    that, arriving late, would print after the summary. Both kinds go through the real pubsub and listener thread."""
    from ray._private.utils import publish_error_to_driver

    quiet_ray_logs()
    worker = ray._private.worker.global_worker
    notice = ("Task JournalActor.append failed. There are infinite retries remaining, so the task will be retried. "
              "Error: The actor is dead because it was killed by `ray.kill`.")
    publish_error_to_driver("task", notice, worker.gcs_client, worker.current_job_id)
    publish_error_to_driver("task", "a real error, edges-mark", worker.gcs_client, worker.current_job_id)
    seen, deadline = "", time.monotonic() + 60
    while "edges-mark" not in seen:
        assert time.monotonic() < deadline, "Ray's listener printed no published error"
        time.sleep(0.05)
        captured = capfd.readouterr()
        seen += captured.out + captured.err
    assert "retries remaining" not in seen, seen
