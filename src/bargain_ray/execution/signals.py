"""SIGINT and SIGTERM: during start-up they end the command at once, quietly; once games run they stop the sweep
the same way, through a flag the driver loop reads, never an exception.

Before the first game there is nothing to stop: a signal then ends the command (``command``) at once from the
handler, 130/143 with one line and no traceback (a library caller gets ``Interrupted``, a KeyboardInterrupt).
Ray is started in a thread the main thread waits on (``cluster.start_ray``), so this holds while ``ray.init``
blocks too. Once games run, raising from a handler
would land at an arbitrary point, inside Ray's C code or a finally block, so the handler only notes the signal.
A second signal while stopping means "now": it raises KeyboardInterrupt (the journals are durable, so nothing
paid is lost).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)

_ends_command = False
"""Set by ``command``: this process is the CLI, which a signal during start-up ends at once (signal dispositions are
the process's, so this is too)."""


def exit_code(signum: int) -> int:
    """The shell's convention for a process stopped by a signal: 128 + its number (130, 143)."""
    return 128 + signum


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM before the first game: nothing was started that needs stopping."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum

    @property
    def line(self) -> str:
        return (f"{signal.Signals(self.signum).name} during start-up: stopped before any game was played; run the "
                "same command to start again")


class Stop:
    """Which signal asked the run to stop, if any; until ``running`` is set a signal raises ``Interrupted``."""

    def __init__(self, running: bool = False) -> None:
        self.signum: int | None = None
        self.running = running
        self._previous: dict[int, Any] = {}

    @property
    def requested(self) -> bool:
        return self.signum is not None

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name if self.signum else ""

    @property
    def exit_code(self) -> int:
        return exit_code(self.signum or 0)

    def handle(self, signum: int, frame: FrameType | None) -> None:
        if not self.running:
            if _ends_command:
                end_command(signum)
            raise Interrupted(signum)
        if self.signum is not None:
            raise KeyboardInterrupt
        self.signum = signum

    def install(self) -> None:
        """Take SIGINT/SIGTERM (again, if something replaced them); main thread only, elsewhere signals are the
        caller's."""
        if threading.current_thread() is not threading.main_thread():
            return
        for s in STOP_SIGNALS:
            previous = signal.signal(s, self.handle)
            self._previous.setdefault(s, previous)

    def restore(self) -> None:
        """Put back the handlers found by the first ``install``."""
        for s, handler in self._previous.items():
            signal.signal(s, handler)
        self._previous.clear()


@contextmanager
def stop_on_signals(running: bool = True) -> Iterator[Stop]:
    """Take SIGINT/SIGTERM on a ``Stop`` while the block runs, then restore the handlers that were there; ``running``
    False starts it in start-up mode (set ``stop.running`` once games are under way)."""
    stop = Stop(running)
    stop.install()
    try:
        yield stop
    finally:
        stop.restore()


def end_command(signum: int) -> None:
    """End the CLI from a signal handler: one line, 130/143, at once.

    Written with ``os.write`` (a handler may interrupt a ``print``) and left with ``os._exit``: an exception raised
    from a handler can be swallowed where it lands (a finalizer), and a ``ray.init`` still running in its thread
    cannot be cancelled, while Ray's exit hook would wait on it. The folder's lock goes with the process, a local
    instance half-started goes with its reaper, and the journals hold nothing unwritten.
    """
    os.write(2, (Interrupted(signum).line + "\n").encode())
    with contextlib.suppress(Exception):
        sys.stdout.flush()
    os._exit(exit_code(signum))


def command(main: Callable[[], int]) -> int:
    """Run the CLI's ``main``: SIGINT/SIGTERM before a sweep's games run end it at once (``end_command``)."""
    global _ends_command
    _ends_command = True
    with stop_on_signals(running=False):
        return main()
