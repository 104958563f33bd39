"""Sweeps with human seats run as the command runs them (a subprocess joined to the session's Ray), their seat
links, and a person's moves on a seat page (``cdp.Page``)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

from cdp import WAIT_S, Page

from bargain_ray.store.seats import SeatsFile, read_seats


def grid(name: str, seed: int, defaults: list[str], designs: str) -> str:
    """A one-block grid ``name`` (its experiment the name without underscores) of ``designs`` (YAML list items)."""
    uses = "".join(f"  - {d}\n" for d in defaults)
    return (f"# @package _global_\ndefaults:\n{uses}grid:\n  name: {name}\n  experiment: {name.replace('_', '')}\n"
            f"  seed: {seed}\n  blocks: 1\n  designs:\n{designs}")


def tickets(pairings: str) -> str:
    """The tickets design of ``pairings``: A buys, B sells and speaks first."""
    return (f"    - game: tickets\n      conditions: [C3]\n      pairings: [{pairings}]\n      assignments:\n"
            "        - {id: 1, roles: {buyer: A, seller: B}, first_speaker: seller}\n")


PAIR = grid("seat_pair", 7, ["/game@games.tickets: tickets", "/condition@conditions.C3: c3", "/model@models.P: human",
                             "/model@models.Q: human", "/model@models.M: claude-haiku-5-5"], tickets("PQ"))
"""Two people, one tickets game."""

FAMILIES = grid("seat_families", 1, [
    "/game@games.tickets: tickets", "/game@games.bargaining: bargaining", "/game@games.orange: orange",
    "/condition@conditions.C3: c3", "/condition@conditions.default: bargaining_default", "/condition@conditions.FT: ft",
    "/model@models.P: human", "/model@models.M: claude-haiku-5-5", "/model@models.O: claude-opus-5-5",
], tickets("PM, MM") + """    - game: bargaining
      conditions: [default]
      pairings: [PM, MM]
      assignments:
        - {id: 1, roles: {buyer: A, seller: B}, first_speaker: seller}
    - game: orange
      conditions: [FT]
      pairings: [PMO, MMO]
      assignments:
        - {id: 1, roles: {party_a: A, party_b: B, observer: C}, first_speaker: party_a}
""")
"""A person against the simulated provider in each of the tickets, bargaining and the orange, beside the model
against itself."""


class Sweep:
    """``python -m bargain_ray +grid=<grid> provider=sim`` in ``cwd`` (whose ``conf/grid`` holds the grid), its
    output read as it comes; ``started`` is set when it printed the seat page's address."""

    def __init__(self, cwd: Path, grid: str, folder: Path, env: dict[str, str], *overrides: str) -> None:
        self.folder = folder
        self.lines: list[str] = []
        self.started = threading.Event()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "bargain_ray", f"+grid={grid}", "provider=sim", f"run.dir={folder}",
             "run.progress=false", *overrides], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line)
            if line.startswith("seat page: "):
                self.started.set()
        self.started.set()  # ended: whoever waits reads the output

    async def seats(self) -> SeatsFile:
        """The seats once the seat page is served."""
        assert await asyncio.to_thread(self.started.wait, WAIT_S), self.output
        assert self.proc.poll() is None, self.output
        seats = read_seats(self.folder)
        assert seats is not None and seats.port, self.output
        return seats

    @property
    def output(self) -> str:
        return "".join(self.lines)

    def wait(self) -> int:
        code = self.proc.wait(timeout=WAIT_S)
        self.reader.join(timeout=10)
        return code

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def write_grid(cwd: Path, name: str, text: str) -> None:
    (cwd / "conf" / "grid").mkdir(parents=True, exist_ok=True)
    (cwd / "conf" / "grid" / f"{name}.yaml").write_text(text)


def link(seats: SeatsFile, game: str, role: str) -> str:
    return seats.link(next(s for s in seats.seats if s.game == game and s.role == role))


async def next_turn(page: Page, after: str) -> str:
    """Wait until the page asks a turn other than ``after`` or says the game is over; the phase."""
    await page.until(f"(document.body.dataset.call && document.body.dataset.call !== {json.dumps(after)})"
                     " || document.getElementById('status').dataset.phase === 'over'")
    return await page.eval("document.getElementById('status').dataset.phase")


async def call_of(page: Page) -> str:
    return await page.eval("document.body.dataset.call")


async def moves(page: Page) -> list[str]:
    return await page.eval("[...document.querySelectorAll('#moves button')].map(b => b.textContent)")


async def fill(page: Page, values: dict[str, str]) -> None:
    for key, text in values.items():
        await page.type(key, text)


async def answer(page: Page, move: str, values: dict[str, str]) -> str:
    """Play ``move`` with ``values`` on the turn the page shows; the call it answered."""
    call = await call_of(page)
    await page.choose(move)
    await fill(page, values)
    await page.send_reply()
    return call


async def repaired(page: Page, sentence: str) -> None:
    """Wait until the repair ``sentence`` is shown in the record, below the reply it answers."""
    await page.until(f"document.getElementById('record').innerText.includes({json.dumps(sentence)})")


def environment(env: dict[str, str]) -> dict[str, str]:
    """The sweep's environment: the session's Ray, no keys, unbuffered output."""
    return env | {"PYTHONUNBUFFERED": "1", "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
