"""``status.json`` and the lock: is a sweep running here, and how many of its units are still to play? And
``limiter.json``, the limiter's state as the driver last saw it.

The driver writes the status at start (state ``running``, the plan's unit count) and at its end
(``ended`` or ``interrupted``); a driver killed outright (or stopped by a full disk) leaves
``running`` behind, which is why "running" is read from the lock (a status that says running with
no driver holding the folder reads as ``stopped``), and "how many to play" from the journal against
the plan's count.
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ValidationError

from bargain_ray.clients.snapshot import KeyLimit, LimiterSnapshot
from bargain_ray.store.journal import read_heads
from bargain_ray.store.lock import Holder, lock_holder
from bargain_ray.store.paths import STATUS

Written = Literal["running", "ended", "interrupted"]
"""What a driver writes: ``running`` at its start, ``ended`` or ``interrupted`` (SIGINT/SIGTERM) at its end."""
State = Literal["running", "ended", "interrupted", "stopped"]
"""What a reader is told: ``stopped`` is never written; it is a ``running`` status whose driver no longer
holds the folder (SIGKILL, a crash, a full disk, a lost machine), our word."""


class StatusFile(BaseModel):
    """``status.json``: what the last driver of the folder said about it (a game's status is ``core.status.Status``)."""

    state: State
    units: int
    """Units of the plan: finished before the driver started plus those it was to play."""
    at: str


class UnreadableStatus(ValueError):
    """``status.json`` is not one a driver wrote (cut short, edited): a reader cannot say what its sweep is doing."""

    def __init__(self, file: Path) -> None:
        super().__init__(f"{file} is not a status this version writes (cut short or edited); delete it: the "
                         "folder's next run writes it again, and its games are in the journal")


class Progress(BaseModel):
    """A folder as a report must describe it."""

    running: Holder | None
    state: State | None
    """The status as ``read_status`` tells it; None before any driver wrote one."""
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
            unchecked = "" if h.checked else "; recorded by another host, whose lock this host cannot check"
            return (f"partial: a sweep is running in this folder (host {h.host}, pid {h.pid}, since {h.since}"
                    f"{unchecked}); {self._counts()}")
        if self.unknown or self.to_play:
            how = "its driver stopped without ending it (killed or crashed)" if self.state == "stopped" else \
                "the sweep is unfinished"
            return f"partial: {how}; {self._counts()}; run it again to finish it"
        return None

    def _counts(self) -> str:
        total = "?" if self.units is None else str(self.units)
        play = "" if self.to_play is None else f", {self.to_play} still to play"
        return f"{self.known} of {total} units finished{play} ({self.unknown} unknown)"


def write_status(path: Path, state: Written, units: int) -> None:
    """Replace the status atomically (a reader never sees half a file)."""
    status = StatusFile(state=state, units=units, at=datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC"))
    tmp = path / f".{STATUS}.tmp"
    tmp.write_text(json.dumps(status.model_dump()))
    os.replace(tmp, path / STATUS)


def read_status(path: Path) -> StatusFile | None:
    """The last driver's status as it stands now, or None before any: ``running`` only while a driver holds
    the folder (``lock_holder``), else ``stopped`` (its driver died without a word). The lock is read before
    and after the file, so a driver that starts or ends meanwhile is never read as stopped."""
    file = path / STATUS
    held = lock_holder(path) is not None
    if not file.exists():
        return None
    try:
        status = StatusFile.model_validate_json(file.read_bytes())
    except ValidationError:
        raise UnreadableStatus(file) from None
    if status.state == "running" and not held and lock_holder(path) is None:
        return status.model_copy(update={"state": "stopped"})
    return status


def read_progress(path: Path, latest: Mapping[str, bool] | None = None) -> Progress:
    """Lock, status and journal read together; writes nothing. ``latest`` (unit_id -> whether its latest record is
    known): the journal as a caller that follows it has read it (the live view), else read here whole."""
    if latest is None:
        latest = {head.unit.unit_id: head.outcome.known for head in read_heads(path)}
    status = read_status(path)
    known = sum(latest.values())
    holder = lock_holder(path)
    if holder is not None and (holder.host, holder.pid) == (socket.gethostname(), os.getpid()):
        holder = None  # the driver reporting on its own folder at its end
    return Progress(running=holder, state=status.state if status else None, units=status.units if status else None,
                    known=known, unknown=len(latest) - known)


LIMITER = "limiter.json"
"""The limiter's state as the driver last saw it (for the live view; written every few seconds)."""


def write_limiter(path: Path, keys: list[KeyLimit]) -> None:
    """Replace ``limiter.json`` atomically (the view reads it while the driver runs)."""
    snap = LimiterSnapshot(at=datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC"), keys=keys)
    tmp = path / f".{LIMITER}.tmp"
    tmp.write_text(snap.model_dump_json())
    os.replace(tmp, path / LIMITER)


def read_limiter(path: Path) -> LimiterSnapshot | None:
    file = path / LIMITER
    try:
        return LimiterSnapshot.model_validate_json(file.read_bytes())
    except (OSError, ValueError):
        return None  # none yet (a sweep without LLMs, or one before this file existed)
