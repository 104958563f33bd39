"""The seat desk: every human seat of a sweep, the turn each waits on, and what each seat's page may see.

A runner's human agent asks a turn (``ask``: the seat's prompt, its form); the desk holds it until the seat's person
answers through the page (``answer``), then hands the reply back. What a seat's token can read is its ``view``:
its own prompt (the engine's view of its role: its brief and the public record, never another role's), its form,
the repair a rule error brought, and the state of its game; nothing of any other seat. Pages wait for a change with
``changed`` (long-poll). The desk keeps no clock of its own beyond a turn's times, and nothing of a person but
what they typed: no address, no browser.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, JsonValue

from bargain_ray.agents.human import Answer
from bargain_ray.core.form import ReplyForm
from bargain_ray.core.prompt import Prompt
from bargain_ray.core.records import utc_now
from bargain_ray.core.status import Status
from bargain_ray.store.seats import Seat, SeatsFile

POLL_S = 20.0
"""How long a page's request for news waits before it is answered with no change (a long-poll)."""
GOODBYE_S = 10.0
"""How long the server, as its run ends, waits for each open page to be told its game ended (ours)."""

ENDINGS = {
    Status.AGREEMENT: "The game is over: an agreement was reached.",
    Status.NO_AGREEMENT: "The game is over: no agreement was reached.",
    Status.FORMAT_FAILURE: "The game is over: a side's replies kept breaking the rules, so the game ended there.",
}
"""What a seat's page says when its game ends with a known result (ours)."""
STOPPED = ("The game stopped before its end (the sweep was stopped, or a turn went unanswered too long). Keep this "
           "page open: it continues here when the sweep runs again.")

Phase = Literal["waiting", "your_turn", "over", "stopped"]


class Said(BaseModel):
    """One message of the seat's request, as its page shows it: from the game (or the other side), or the seat's
    own earlier reply."""

    by: Literal["game", "you"]
    text: str


class SeatView(BaseModel):
    """Everything a seat's token receives: only this seat's own view."""

    role: str
    game: str
    phase: Phase
    version: int
    brief: str | None = None
    messages: list[Said] = []
    form: ReplyForm | None = None
    call: str | None = None
    """The call the form answers (an answer names it, so a stale page never answers the next turn)."""
    limit_s: float | None = None
    """Seconds left for this turn (None: no limit, or not shown yet)."""
    note: str | None = None


@dataclass
class Turn:
    """A turn put to a seat, waiting for its person."""

    call_id: str
    prompt: Prompt
    asked_at: datetime
    reply: asyncio.Future[tuple[str, datetime]]
    shown_at: datetime | None = None
    shown: asyncio.Event = field(default_factory=asyncio.Event)


@dataclass
class SeatDesk:
    """The seats of one sweep (``seats.json``) and the turns in flight; ``save`` persists the file on a change."""

    file: SeatsFile
    save: Callable[[SeatsFile], None]
    limit_s: float | None = None
    turns: dict[str, Turn] = field(default_factory=dict)
    """seat -> the turn it is asked now."""
    last: dict[str, Prompt] = field(default_factory=dict)
    """seat -> its last prompt (shown while the other side moves)."""
    notes: dict[str, str] = field(default_factory=dict)
    versions: dict[str, int] = field(default_factory=dict)
    events: dict[str, asyncio.Event] = field(default_factory=dict)
    open_pages: set[str] = field(default_factory=set)
    """Seats whose page asked for its view in this run."""
    untold: set[str] = field(default_factory=set)
    """Seats whose game ended and whose open page has not been shown so yet."""
    told: asyncio.Event = field(default_factory=asyncio.Event)

    def __post_init__(self) -> None:
        self.seats = {s.seat: s for s in self.file.seats}
        self.tokens = {s.token: s for s in self.file.seats}

    def seat_of(self, token: str) -> Seat | None:
        return self.tokens.get(token)

    def _changed(self, seat: str) -> None:
        self.versions[seat] = self.versions.get(seat, 0) + 1
        self.events.pop(seat, asyncio.Event()).set()

    def _state(self, seat: Seat, state: Literal["playing", "done"]) -> None:
        if seat.state != state and seat.state != "done":
            seat.state = state
            self.save(self.file)

    async def ask(self, seat: str, call_id: str, prompt: Prompt) -> Answer:
        """Put ``prompt`` to ``seat``'s person and wait for the answer (``text`` None: the turn limit passed)."""
        turn = Turn(call_id, prompt, utc_now(), asyncio.get_running_loop().create_future())
        self.turns[seat], self.last[seat] = turn, prompt
        self.notes.pop(seat, None)
        self._changed(seat)
        try:
            if self.limit_s is None:
                text, at = await turn.reply
            else:
                await turn.shown.wait()  # a seat whose person never came waits: its game is never scored
                text, at = await asyncio.wait_for(asyncio.shield(turn.reply), self.limit_s)
        except TimeoutError:
            text, at = None, utc_now()
        finally:
            if self.turns.get(seat) is turn:
                del self.turns[seat]
            self._changed(seat)
        return Answer(text=text, asked_at=turn.asked_at, shown_at=turn.shown_at, answered_at=at)

    def answer(self, token: str, call_id: str, move: int, values: dict[str, str]) -> str | None:
        """Take the person's answer to the turn ``call_id``; None when taken, else why not (one line)."""
        seat = self.tokens[token]
        turn = self.turns.get(seat.seat)
        if turn is None or turn.call_id != call_id or turn.reply.done():
            return "this turn was already answered or is no longer open: the page shows the current one"
        form = turn.prompt.form
        if form is None:
            return "this turn has no form"
        try:
            text = form.reply(move, values)
        except ValueError as exc:
            return str(exc)
        turn.reply.set_result((text, utc_now()))
        return None

    def end(self, seat: str, status: Status) -> None:
        """The seat's game ended: over with a known result, else stopped (played again on resume)."""
        self.turns.pop(seat, None)
        self.notes[seat] = ENDINGS.get(status, STOPPED)
        if seat in self.open_pages:
            self.untold.add(seat)
        if status.known:
            self._state(self.seats[seat], "done")
        self._changed(seat)

    def view(self, token: str) -> SeatView:
        """What ``token``'s page shows now (a turn shown here counts as shown to its person)."""
        seat = self.tokens[token]
        self._state(seat, "playing")
        turn = self.turns.get(seat.seat)
        prompt = turn.prompt if turn is not None else self.last.get(seat.seat)
        left = None
        if turn is not None:
            if turn.shown_at is None:
                turn.shown_at = utc_now()
                turn.shown.set()
            if self.limit_s is not None:
                left = max(0.0, self.limit_s - (utc_now() - turn.shown_at).total_seconds())
        note = self.notes.get(seat.seat)
        self.open_pages.add(seat.seat)
        if note is not None and seat.seat in self.untold:
            self.untold.discard(seat.seat)
            self.told.set()
        phase: Phase = "your_turn" if turn is not None else (
            "waiting" if note is None else "over" if seat.state == "done" else "stopped")
        messages = [Said(by="you" if m.role == "assistant" else "game", text=m.content)
                    for m in (prompt.messages if prompt else ())]
        return SeatView(role=seat.role, game=seat.game, phase=phase, version=self.versions.get(seat.seat, 0),
                        brief=prompt.system if prompt else None, messages=messages,
                        form=turn.prompt.form if turn is not None else None,
                        call=turn.call_id if turn is not None else None, limit_s=left, note=note)

    async def changed(self, token: str, since: int, wait_s: float = POLL_S) -> None:
        """Return once ``token``'s seat has changed past version ``since``, or after ``wait_s``."""
        seat = self.tokens[token].seat
        if self.versions.get(seat, 0) != since:
            return
        event = self.events.setdefault(seat, asyncio.Event())
        try:
            await asyncio.wait_for(event.wait(), wait_s)
        except TimeoutError:
            pass

    async def goodbye(self, wait_s: float = GOODBYE_S) -> None:
        """Wait (``wait_s`` at most) until every open page whose game ended has been shown that it did."""
        loop = asyncio.get_running_loop()
        until = loop.time() + wait_s
        while self.untold and (left := until - loop.time()) > 0:
            self.told.clear()
            try:
                await asyncio.wait_for(self.told.wait(), left)
            except TimeoutError:
                return

    def hand_out(self) -> Seat | None:
        """The lobby's next seat: the first not yet handed out whose game is not done."""
        seat = next((s for s in self.file.seats if not s.handed_out and s.state == "waiting"), None)
        if seat is not None:
            seat.handed_out = True
            self.save(self.file)
        return seat


def json_of(view: SeatView) -> dict[str, JsonValue]:
    """A view as its page receives it."""
    return view.model_dump(mode="json")
