"""``seats.json``: the human seats of a sweep folder, their tokens, and the port their page is served on.

Written by the driver before the seat server starts and by the seat server as persons arrive and games end, so a
restarted run serves the same links on the same port (a page left open finds its game again) and the lobby never
hands out a seat twice. The tokens are the seats' only keys: the file is readable by its owner only, and
``SeatBoard`` (what the summary and the live view show) holds none of them. Nothing about a person is kept here
beyond whether a seat was handed out.
"""

from __future__ import annotations

import os
import secrets
from collections import Counter
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

SEATS = "seats.json"
TOKEN_BYTES = 18
"""Bytes of randomness in a seat's token (144 bits; ours)."""

SeatState = Literal["waiting", "playing", "done"]
"""``waiting``: no person has opened the seat; ``playing``: a person has, its game not yet over; ``done``: its game
has a known result."""


class Seat(BaseModel):
    """One human seat: a role of one game, its token, whether the lobby handed it out, and its state."""

    model_config = ConfigDict(extra="forbid")

    seat: str
    unit_id: str
    role: str
    game: str
    token: str
    handed_out: bool = False
    state: SeatState = "waiting"


class SeatBoard(BaseModel):
    """What may be shown of a folder's seats: where the page is, and how many seats wait, play and are done."""

    url: str
    waiting: int = 0
    playing: int = 0
    done: int = 0

    def line(self) -> str:
        return (f"human seats at {self.url} (lobby; each seat's own link in {SEATS}): {self.waiting} waiting, "
                f"{self.playing} playing, {self.done} done")


class SeatsFile(BaseModel):
    """``seats.json``: where the seat page is served, and every human seat the folder has had."""

    model_config = ConfigDict(extra="forbid")

    host: str
    port: int
    seats: list[Seat] = []

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/"

    def board(self) -> SeatBoard:
        counts = Counter(s.state for s in self.seats)
        return SeatBoard(url=self.url, waiting=counts["waiting"], playing=counts["playing"], done=counts["done"])

    def link(self, seat: Seat) -> str:
        return f"{self.url}s/{seat.token}"


def new_token() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)


def read_seats(path: Path) -> SeatsFile | None:
    """The folder's seats, or None when it has none."""
    try:
        return SeatsFile.model_validate_json((path / SEATS).read_bytes())
    except FileNotFoundError:
        return None


def write_seats(path: Path, seats: SeatsFile) -> None:
    """Replace ``seats.json`` atomically, readable by its owner only (it holds every seat's token)."""
    tmp = path / f".{SEATS}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(seats.model_dump_json(indent=1))
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path / SEATS)


def open_seats(path: Path, host: str, port: int, wanted: list[tuple[str, str, str, str]]) -> SeatsFile:
    """The folder's seats with every seat of ``wanted`` ((seat, unit id, role, game), in the order the lobby hands
    them out): those it had keep their token and state, new ones get a fresh token. The port: ``port`` when set,
    else the one the folder's page was served on, else ``0`` (the caller picks a free one)."""
    before = read_seats(path)
    had = {s.seat: s for s in before.seats} if before else {}
    seats = [had.get(seat) or Seat(seat=seat, unit_id=unit, role=role, game=game, token=new_token())
             for seat, unit, role, game in wanted]
    rest = [s for s in had.values() if s.seat not in {w[0] for w in wanted}]
    return SeatsFile(host=host, port=port or (before.port if before else 0), seats=seats + rest)
