"""``status.json`` and the lock: is a sweep running here, and how many of its units are still to play?

The driver writes the status at start (state ``running``, the plan's unit count) and at its end
(``ended`` or ``interrupted``); a driver killed outright (or stopped by a full disk) leaves
``running`` behind, which is why "running" is read from the lock, and "how many to play" from
the journal against the plan's count.
"""

from __future__ import annotations

import json
import os
import socket
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from bargain_ray.store.journal import read_records
from bargain_ray.store.lock import Holder, lock_holder
from bargain_ray.store.paths import STATUS

State = Literal["running", "ended", "interrupted"]


class Status(BaseModel):
    """What the last driver of the folder said about it."""

    state: State
    units: int
    """Units of the plan: finished before the driver started plus those it was to play."""
    at: str


class Progress(BaseModel):
    """A folder as a report must describe it."""

    running: Holder | None
    units: int | None
    """The plan's unit count, if a driver recorded it."""
    known: int
    unknown: int

    @property
    def to_play(self) -> int | None:
        return None if self.units is None else max(0, self.units - self.known)

    def note(self) -> str | None:
        """One line when the tables are partial, else None (our wording)."""
        if self.running is not None:
            h = self.running
            return (f"partial: a sweep is running in this folder (host {h.host}, pid {h.pid}, since {h.since}); "
                    f"{self._counts()}")
        if self.unknown or self.to_play:
            return f"partial: the sweep is unfinished; {self._counts()}; run it again to finish it"
        return None

    def _counts(self) -> str:
        total = "?" if self.units is None else str(self.units)
        play = "" if self.to_play is None else f", {self.to_play} still to play"
        return f"{self.known} of {total} units finished{play} ({self.unknown} unknown)"


def write_status(path: Path, state: State, units: int) -> None:
    """Replace the status atomically (a reader never sees half a file)."""
    status = Status(state=state, units=units, at=datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC"))
    tmp = path / f".{STATUS}.tmp"
    tmp.write_text(json.dumps(status.model_dump()))
    os.replace(tmp, path / STATUS)


def read_status(path: Path) -> Status | None:
    file = path / STATUS
    return Status.model_validate_json(file.read_text()) if file.exists() else None


def read_progress(path: Path) -> Progress:
    """Lock, status and journal read together; writes nothing."""
    latest: dict[str, bool] = {}
    for rec in read_records(path):
        latest[rec["unit"]["unit_id"]] = bool(rec["outcome"]["known"])
    status = read_status(path)
    known = sum(latest.values())
    holder = lock_holder(path)
    if holder is not None and (holder.host, holder.pid) == (socket.gethostname(), os.getpid()):
        holder = None  # the driver reporting on its own folder at its end
    return Progress(running=holder, units=status.units if status else None,
                    known=known, unknown=len(latest) - known)
