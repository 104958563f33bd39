"""The summary's start-up line: seconds from the command's start to the plan line, to Ray ready, to the first
request sent and to the first game finished.

The command's start is the monotonic time its first line of Python took (``bargain_ray.__main__``), not the
process's: launched as ``pip install … && python -m bargain_ray …``, bash runs the command in its own process, whose
start includes the install.
"""

from __future__ import annotations

import time


class StartupClock:
    """When each start-up mark first happened, in seconds after ``started`` (monotonic; default now)."""

    LABELS = {"plan": "plan", "ray": "ray", "request": "first request", "game": "first game"}

    def __init__(self, started: float | None = None) -> None:
        self.started = time.monotonic() if started is None else started
        self.marks: dict[str, float] = {}

    def mark(self, name: str, at: float | None = None) -> None:
        """The first time ``name`` happened (monotonic ``at``, else now); later ones change nothing."""
        at = time.monotonic() if at is None else at
        self.marks[name] = min(self.marks.get(name, at - self.started), at - self.started)

    def line(self) -> str:
        """E.g. ``start-up: plan 0.6 s, ray 4.1 s, first request 6.0 s, first game 9.2 s`` (what happened)."""
        return "start-up: " + ", ".join(f"{label} {self.marks[k]:.1f} s" for k, label in self.LABELS.items()
                                        if k in self.marks)
