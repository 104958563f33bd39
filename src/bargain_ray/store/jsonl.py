"""The one durable JSONL format of the sweep folder, shared by the game, call and batch journals.

A line is complete only when it ends in a newline: a kill (or a full disk) mid-write leaves a torn
tail, which readers ignore and the first append of a process cuts, so a new line never joins onto
it. A complete line that is not JSON, or JSON that is not the journal's record, was not written by us
(an edit, a disk fault): it is refused with its file and line, never skipped, because the game or paid
call it held would be lost. Every line is a model's JSON stamped with the format's ``version``
(``JOURNAL_VERSION``); a line without one was written before versions existed and reads as version 1.
"""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, Field, ValidationError

T = TypeVar("T")

JOURNAL_VERSION = 4
"""The line format this code writes: 1 had no ``version`` field; 2 stamps it on every line (and adds the
call journal's spend entries); 3 adds when each call was sent and answered and each game started and ended,
a call's ``system_fingerprint``, the batch journal's intents (a batch's key and call ids, journaled before its
create call), and names a unit's role -> letter map ``letter_of_role`` (``model_of_role`` before, still
read); 4 adds a spend entry's 429s and what served it. A reader takes every version up to this one and refuses
a newer line."""

VERSION = {"version": JOURNAL_VERSION}


class JournalLine(BaseModel):
    """What every journal line carries: the version of the format it was written in.

    Left out of the model's own dumps (a record read back and exported is the record); ``encode`` stamps
    the current version on every line it writes."""

    version: int = Field(1, ge=1, le=JOURNAL_VERSION, exclude=True)


class CorruptJournal(ValueError):
    """A complete line of a journal is not JSON, or not the record the journal holds."""

    def __init__(self, path: Path, line: int, detail: str, what: str = "a JSON line") -> None:
        self.file, self.line = path, line
        self.reason = f"not {what} ({detail})"
        """What is wrong with the line, in a few words (a reader that goes on past it shows this)."""
        super().__init__(
            f"{path}:{line}: {self.reason}; nothing was run. The file was changed outside "
            f"bargain_ray: restore it from a backup, or delete line {line} (the game or call it held runs "
            "again on resume, and a deleted call is paid again)."
        )


class NewerJournal(CorruptJournal):
    """A line written in a newer format than this code reads: nothing is wrong with the folder."""

    def __init__(self, path: Path, line: int, version: object) -> None:
        self.file, self.line = path, line
        self.reason = f"written in journal format {version}, and this bargain_ray reads formats up to {JOURNAL_VERSION}"
        ValueError.__init__(
            self, f"{path}:{line}: {self.reason}; nothing was run. Resume the folder with the bargain_ray that wrote it "
            "(or newer).")


class DiskFull(OSError):
    """An append found no room: the run ends, every line already appended is kept."""

    def __init__(self, folder: Path) -> None:
        super().__init__(errno.ENOSPC, "no space left on device", str(folder))

    def __reduce__(self) -> tuple[type, tuple[Path]]:  # crosses Ray from the call journal's actor
        return DiskFull, (Path(self.filename),)

    def __str__(self) -> str:
        return (f"the disk holding {self.filename} is full; the run stopped and every result already "
                "journaled is kept. Free some space, then run the same command again to resume.")


def is_disk_full(exc: BaseException | None) -> bool:
    """ENOSPC raised here or by any other write of the folder (a manifest, a status file), also when it
    reaches the driver wrapped by Ray (``RayTaskError.cause``) from the call journal's actor."""
    for _ in range(8):
        if exc is None:
            return False
        if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
            return True
        exc = getattr(exc, "cause", None) or exc.__cause__
    return False


def read_lines(path: Path, parse: Callable[[bytes], T]) -> Iterator[T]:
    """Every complete line of ``path`` as ``parse`` reads its bytes (a model's ``model_validate_json``, or
    the bytes themselves), oldest first; a torn last line is not yet a line."""
    if not path.exists():
        return
    with path.open("rb") as f:
        for number, line in enumerate(f, 1):
            if not line.endswith(b"\n"):
                return
            try:
                yield parse(line)
            except ValueError as exc:  # JSONDecodeError, invalid UTF-8 and a model's ValidationError alike
                raise corrupt(path, number, exc) from None


def corrupt(path: Path, number: int, exc: ValueError) -> CorruptJournal:
    """The refusal of line ``number``: not JSON at all, or JSON that is not the journal's record (one line)."""
    if not isinstance(exc, ValidationError):
        return CorruptJournal(path, number, str(exc).split(":")[0])
    first = exc.errors(include_url=False)[0]
    if first["type"] == "json_invalid":
        return CorruptJournal(path, number, first["msg"])
    if first["loc"][-1:] == ("version",) and first["type"] == "less_than_equal":
        return NewerJournal(path, number, first["input"])
    where = ".".join([exc.title, *(str(part) for part in first["loc"])])
    return CorruptJournal(path, number, f"{where}: {first['msg']}", what="a record as this version writes it")


def tail_lines(file: Path, offset: int, limit: int = 1 << 24) -> tuple[list[bytes], int]:
    """Complete lines of a journal after byte ``offset`` (about ``limit`` bytes of them at most), as written, and
    the offset after them: a reader following a growing journal reads each line once, in bounded steps. A torn
    tail waits for its newline."""
    out: list[bytes] = []
    if not file.exists():
        return out, offset
    start = offset
    with file.open("rb") as f:
        f.seek(offset)
        while offset - start < limit:
            line = f.readline()
            if not line.endswith(b"\n"):
                break
            out.append(line)
            offset += len(line)
    return out, offset


def read_tail(file: Path, offset: int, parse: Callable[[bytes], T]) -> tuple[list[T], list[CorruptJournal], int]:
    """``tail_lines`` typed by ``parse`` (a model's ``model_validate_json``): the records, the refusals of the lines
    that are not theirs (each naming its file and line), and the offset after them. A follower (the live view, the
    bar) goes on past a bad line, where a resume would refuse the folder."""
    lines, end = tail_lines(file, offset)
    records, refused = [], []
    for line in lines:
        try:
            records.append(parse(line))
        except ValueError as exc:
            refused.append(corrupt(file, line_at(file, offset), exc))
        offset += len(line)
    return records, refused, end


def line_at(file: Path, offset: int) -> int:
    """The 1-based number of the line that starts at byte ``offset`` (only to name a line that is not its record)."""
    with file.open("rb") as f:
        return f.read(offset).count(b"\n") + 1


def complete_size(path: Path) -> int:
    """Bytes of ``path`` up to its last newline: what readers see of it."""
    if not path.exists():
        return 0
    with path.open("rb") as f:
        size = f.seek(0, os.SEEK_END)
        step = 1 << 16
        end = size
        while end > 0:
            start = max(0, end - step)
            f.seek(start)
            chunk = f.read(end - start)
            cut = chunk.rfind(b"\n")
            if cut >= 0:
                return start + cut + 1
            end = start
    return 0


def encode_line(line: BaseModel) -> bytes:
    """One line as written: the model's JSON dump stamped with ``version`` (last, so a game line still starts
    with its unit id), non-ASCII escaped so any text a Python str holds encodes."""
    return json.dumps(line.model_dump(mode="json") | VERSION).encode() + b"\n"


def encode(lines: Iterable[BaseModel]) -> bytes:
    return b"".join(encode_line(line) for line in lines)


class Appender:
    """Appends batches of lines to one journal: one write, one fsync per batch.

    Unbuffered (``os.write``), so a failed write leaves nothing in a buffer for ``close`` to retry;
    a write cut short by ENOSPC is truncated back to the last complete line at once.
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._fd: int | None = None

    def append(self, lines: Iterable[BaseModel]) -> None:
        self.write(encode(lines))

    def write(self, data: bytes) -> None:
        """Append lines already encoded (``encode``), in one write and one fsync."""
        if not data:
            return
        if self._fd is None:
            self._open()
        assert self._fd is not None
        start = os.lseek(self._fd, 0, os.SEEK_END)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(self._fd, view):]
            os.fsync(self._fd)
        except OSError as exc:
            if not is_disk_full(exc):
                raise
            os.ftruncate(self._fd, start)
            raise DiskFull(self.path.parent) from None

    def _open(self) -> None:
        try:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            size = os.lseek(self._fd, 0, os.SEEK_END)
            keep = complete_size(self.path)
            if keep != size:  # a torn tail: cut it, so this append starts a line of its own
                os.ftruncate(self._fd, keep)
        except OSError as exc:
            if is_disk_full(exc):
                raise DiskFull(self.path.parent) from None
            raise

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
