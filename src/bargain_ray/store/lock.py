"""One driver per sweep folder: a lock held for the life of a driver.

``flock`` on ``driver.lock``: the kernel releases it when the process ends, however it ends, so a
SIGKILLed driver leaves no stale lock on a local disk. The file is never deleted (a driver that
opened it could otherwise lock a deleted inode while another locks a new one); it holds the
holder's host, pid and start time for the refusal message, and is emptied on release; a SIGKILLed
driver leaves its record behind with the flock free, which is how a reader tells a dead driver.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import socket
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from bargain_ray.store.paths import LOCK


class Holder(BaseModel):
    """Who holds a sweep folder."""

    host: str
    pid: int
    since: str
    checked: bool = Field(default=True, exclude=True)
    """False for a holder only recorded, by another host, with the flock free here (see ``lock_holder``);
    never written to the file."""


class FolderLocked(RuntimeError):
    """Another driver holds the sweep folder."""

    def __init__(self, path: Path, holder: Holder | None) -> None:
        who = (f"host {holder.host}, pid {holder.pid}, since {holder.since}" if holder
               else "holder not recorded yet")
        super().__init__(
            f"{path} is in use by another driver ({who}); nothing was run. Wait for it to end or stop it; "
            f"if no such process is running (its host is down, or the folder is on a network filesystem "
            f"that kept the lock), delete {path / LOCK} and run again."
        )


class FolderUnwritable(FolderLocked):
    """The sweep folder cannot be written here (a read-only filesystem, no permission): no driver can hold it."""

    def __init__(self, path: Path, reason: str) -> None:
        RuntimeError.__init__(
            self, f"{path} cannot be written ({reason}); nothing was run. Make it writable, or choose another "
                  f"folder with run.dir=<path>.")


def _writable(path: Path) -> None:
    """Create ``path`` if absent and prove a file can be made in it (as the journals will), else FolderUnwritable.

    Checked by writing, not by ``os.access``: root passes every permission check, and a read-only mount refuses
    root too. Any refusal but a full disk (its own message, ``DiskFull``) is the folder's: a read-only mount, no
    permission, a file where the folder should be (or on its way), a place no file can be made (``/proc/self``)."""
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as exc:
        raise _unwritable(path, exc) from None


def _unwritable(path: Path, exc: OSError) -> OSError | FolderUnwritable:
    """The refusal of a folder whose files cannot be made (``exc`` itself for a full disk)."""
    if exc.errno == errno.ENOSPC:
        return exc
    if path.exists() and not path.is_dir():
        return FolderUnwritable(path, "it is a file, not a folder")
    if exc.errno == errno.ENOTDIR:
        return FolderUnwritable(path, "a part of its path is a file, not a folder")
    return FolderUnwritable(path, exc.strerror or type(exc).__name__)


def _read_holder(fd: int) -> Holder | None:
    os.lseek(fd, 0, os.SEEK_SET)
    data = os.read(fd, 4096)
    try:
        return Holder.model_validate_json(data)
    except ValidationError:
        return None


@contextmanager
def hold_lock(path: Path) -> Iterator[Holder]:
    """Hold the sweep folder ``path`` (created if absent) until the block ends; refuses at once
    with ``FolderLocked`` naming the holder if another process holds it, or ``FolderUnwritable`` if it cannot be
    written here."""
    _writable(path)
    try:
        fd = os.open(path / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise _unwritable(path, exc) from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise FolderLocked(path, _read_holder(fd)) from None
        me = Holder(host=socket.gethostname(), pid=os.getpid(),
                    since=datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC"))
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(me.model_dump()).encode(), 0)
        os.fsync(fd)
        try:
            yield me
        finally:
            os.ftruncate(fd, 0)
    finally:
        os.close(fd)


def lock_holder(path: Path) -> Holder | None:
    """The driver holding ``path`` now as far as this host can tell, or None: "is a sweep running here?"
    (reads, never creates).

    The kernel's flock answers for every driver on this host: free means none holds it, alive or not.
    A holder that another host recorded, with the flock free here, is returned with ``checked=False``
    and so still counts as running (our choice): where a filesystem does not carry flocks across hosts,
    a live driver there looks exactly like a dead one from here, and judging it dead would show a live
    sweep as stopped. The folder's next driver, or that driver's own end, clears the record.
    """
    try:
        fd = os.open(path / LOCK, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _read_holder(fd) or Holder(host="?", pid=0, since="?")
        try:
            left = _read_holder(fd)  # under the shared flock no driver is writing it
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
        if left is None or left.host == socket.gethostname():
            return None  # released (empty), or left by a dead driver of this host
        return left.model_copy(update={"checked": False})
    finally:
        os.close(fd)
