"""The seat server as a Ray actor on the driver's node, and the desk a game runner's human agents ask through it.

One async actor per sweep with human seats: it serves the seat pages (``seats.server``) from its own event loop
and answers the runners' ``ask`` calls, each waiting for its person. It is pinned to the driver's node (its
address is the one printed, and it writes ``seats.json`` in the sweep folder) and restarted there when its process
dies: the restarted one reads ``seats.json`` again and serves the same links on the same port, and Ray sends it
again the asks that were waiting, so each turn is asked again where it stood (a person's answer reaches the game
only once: it is journaled by the runner before the game goes on, and replayed from there on resume).
"""

from __future__ import annotations

import socket
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from bargain_ray.agents.human import Answer, seat_id
from bargain_ray.clients.limiter import NAMESPACE
from bargain_ray.core.errors import Failure, FailureKind, TechnicalFailure
from bargain_ray.core.prompt import Prompt
from bargain_ray.core.status import Status
from bargain_ray.core.unit import Unit
from bargain_ray.design import ResolvedSweep
from bargain_ray.execution.journal_actor import RESTARTS
from bargain_ray.seats.desk import SeatDesk
from bargain_ray.seats.server import serve
from bargain_ray.store.seats import SeatBoard, SeatsFile, open_seats, read_seats, write_seats

CONCURRENCY = 1 << 16
"""Asks (one per human seat whose turn it is) and page requests the actor serves at once."""


class SeatServer:
    """The seat desk of one sweep folder and the aiohttp server of its pages, started on first use."""

    def __init__(self, folder: str, limit_s: float | None) -> None:
        self.folder = Path(folder)
        file = read_seats(self.folder)
        assert file is not None, "the driver writes seats.json before it starts the seat server"
        self.desk = SeatDesk(file, lambda f: write_seats(self.folder, f), limit_s)
        self.runner: Any = None

    async def serve(self) -> str:
        """Serve the pages (once); the lobby's address. A folder's first run takes a free port and keeps it."""
        file = self.desk.file
        if self.runner is None:
            self.runner = await serve(self.desk, file.host, file.port)
            if not file.port:
                file.port = self.runner.addresses[0][1]
                write_seats(self.folder, file)
        return file.url

    async def ask(self, seat: str, call_id: str, prompt: Prompt) -> Answer:
        await self.serve()
        return await self.desk.ask(seat, call_id, prompt)

    async def end(self, seat: str, status: Status) -> None:
        await self.serve()
        self.desk.end(seat, status)

    async def board(self) -> SeatBoard:
        await self.serve()
        return self.desk.file.board()

    async def close(self) -> None:
        """Stop serving, once every open page was told its game ended (``SeatDesk.goodbye``)."""
        await self.desk.goodbye()
        if self.runner is not None:
            await self.runner.cleanup()
            self.runner = None


def seats_of(sweep: ResolvedSweep, units: Iterable[Unit]) -> list[tuple[str, str, str, str]]:
    """(seat, unit id, role, game) of every human seat of ``units``, in their order (the lobby's)."""
    humans = {letter for letter, m in sweep.models.items() if m.is_human}
    if not humans:
        return []
    return [(seat_id(u.unit_id, role), u.unit_id, role, u.game) for u in units
            for role, letter in u.letter_of_role.items() if letter in humans]


class SeatsUnavailable(Exception):
    """The seat page cannot be served where ``run.seats`` says."""


def prepare_seats(sweep: ResolvedSweep, path: Path, units: Iterable[Unit]) -> SeatsFile | None:
    """Before Ray and any call: the folder's ``seats.json`` with a token for each human seat of ``units``, and its
    port checked free (raises ``SeatsUnavailable`` in one line); None when no unit to play has a human seat."""
    wanted = seats_of(sweep, units)
    if not wanted:
        return None
    settings = sweep.run.seats
    file = open_seats(path, settings.host, settings.port, wanted)
    try:
        socket.create_server((file.host, file.port)).close()
    except OSError as exc:
        raise SeatsUnavailable(
            f"cannot serve the seat page on {file.host}:{file.port or 'a free port'}: {exc.strerror or exc}; set "
            "run.seats.port= to a free port (or run.seats.host= to an address of this machine)") from None
    write_seats(path, file)
    return file


def start_seats(sweep_dir: Path, limit_s: float | None) -> Any:
    """The seat server's actor on this (the driver's) node, serving once this returns."""
    node = ray.get_runtime_context().get_node_id()
    actor: Any = ray.remote(num_cpus=0, max_restarts=RESTARTS, max_task_retries=-1)(SeatServer).options(
        name=f"bargain_ray_seats_{uuid.uuid4().hex[:8]}", namespace=NAMESPACE, max_concurrency=CONCURRENCY,
        scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=node, soft=False),
    ).remote(str(sweep_dir.resolve()), limit_s)
    ray.get(actor.serve.remote())
    return actor


class RemoteDesk:
    """The seat server as a game runner's human agents reach it (``agents.human.Desk``)."""

    def __init__(self, actor: Any) -> None:
        self.actor = actor

    async def ask(self, seat: str, call_id: str, prompt: Prompt) -> Answer:
        try:
            answer: Answer = await self.actor.ask.remote(seat, call_id, prompt)
        except ray.exceptions.RayActorError:
            raise TechnicalFailure(Failure(kind=FailureKind.OTHER, detail=LOST)) from None
        return answer

    async def end(self, seat: str, status: Status) -> None:
        try:
            await self.actor.end.remote(seat, status)
        except ray.exceptions.RayActorError:
            pass  # the page shows nothing more; the game's record is the runner's


LOST = ("the seat server's actor was lost (its process died and could not be restarted): the game is unknown, "
        "played again from this turn when the sweep runs again")
