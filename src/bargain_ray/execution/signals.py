"""SIGINT and SIGTERM stop a sweep the same way: a flag the driver loop reads, never an exception.

Raising from a signal handler lands at an arbitrary point, inside Ray's C code or a finally
block, and ``ray.init`` replaces the SIGTERM handler with its own ``sys.exit`` (which aborted
with exit 134 and no tables). So the handlers only note the signal; they are installed after
Ray started and put back when the driver is done. A second signal while stopping means
"now": it raises KeyboardInterrupt (the journals are durable, so nothing paid is lost).
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Stop:
    """Which signal asked the run to stop, if any."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self._previous: dict[int, Any] = {}

    @property
    def requested(self) -> bool:
        return self.signum is not None

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name if self.signum else ""

    @property
    def exit_code(self) -> int:
        """The shell's convention for a process stopped by a signal: 128 + its number (130, 143)."""
        return 128 + (self.signum or 0)

    def handle(self, signum: int, frame: FrameType | None) -> None:
        if self.signum is not None:
            raise KeyboardInterrupt
        self.signum = signum

    def install(self) -> None:
        """Take SIGINT/SIGTERM (again: ``ray.init`` replaces SIGTERM's handler); main thread only, elsewhere
        signals are the caller's."""
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
def stop_on_signals() -> Iterator[Stop]:
    """Note SIGINT/SIGTERM on a ``Stop`` while the block runs, then restore the handlers that were there."""
    stop = Stop()
    stop.install()
    try:
        yield stop
    finally:
        stop.restore()
