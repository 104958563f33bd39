"""The Ray actor that plays games: stateless per game, many games in flight."""

from __future__ import annotations

import asyncio
from typing import Any, NamedTuple

import ray

from bargain_ray.agents import make_agent
from bargain_ray.agents.base import Agent
from bargain_ray.agents.human import seat_id
from bargain_ray.clients.limiter import holder_id
from bargain_ray.core.errors import Failure
from bargain_ray.core.records import GameRecord, utc_now
from bargain_ray.core.unit import Unit
from bargain_ray.design import ResolvedSweep
from bargain_ray.execution.batcher import batched_clients
from bargain_ray.execution.calljournal import JournaledAgent, Ledger, void_failed_calls
from bargain_ray.execution.seat_actor import RemoteDesk
from bargain_ray.games import Game
from bargain_ray.games.base import GameState
from bargain_ray.play.loop import play
from bargain_ray.providers import ClientPool
from bargain_ray.store.calls import CallEntry, Entry


class Job(NamedTuple):
    """One game to play: its unit and the replies it already paid for (``GameRunner.play``'s arguments)."""

    unit: Unit
    recorded_calls: list[CallEntry]


class GameRunner:
    """Holds the games and clients of one sweep; each actor task plays a few units (``run.games_per_task``).

    A runner whose sweep ended cleanly may be kept by its driver for the driver's next sweep (``execution.pool``):
    ``close`` drops the sweep's connections and keys, ``bind`` gives it the next sweep."""

    def __init__(self, sweep: dict[str, Any], journal: Any = None, keys: dict[str, str] | None = None,  # the ResolvedSweep's JSON dump as sent, validated in bind
                 budget: Any = None, seats: Any = None) -> None:
        self.bind(sweep, journal, keys, budget, seats)

    def bind(self, sweep: dict[str, Any], journal: Any = None, keys: dict[str, str] | None = None,  # the ResolvedSweep's JSON dump as sent, validated on the next line
             budget: Any = None, seats: Any = None) -> None:
        """Take ``sweep``: its games, its models' clients under ``keys``, its call journal and budget, and its seat
        server (the actor of ``execution.seat_actor``, when it has human seats)."""
        self.take(ResolvedSweep.model_validate(sweep), journal, keys, budget, seats)

    def take(self, sweep: ResolvedSweep, journal: Any = None, keys: dict[str, str] | None = None,
             budget: Any = None, seats: Any = None) -> None:
        """``bind`` of a sweep already validated."""
        self.sweep = sweep
        self.clients = ClientPool(self.sweep.provider, keys, batched_clients(self.sweep))
        self.ledger = Ledger(journal, budget, holder_id())  # what its reservations are held under, as its slots are
        self.desk = RemoteDesk(seats) if seats is not None else None
        self._games: dict[tuple[str, str], Game] = {}

    def _game(self, name: str, condition: str) -> Game:
        key = (name, condition)
        if key not in self._games:
            self._games[key] = self.sweep.game(name, condition)
        return self._games[key]

    def start(self, unit: Unit) -> tuple[Game, GameState | None]:
        """The game ``unit`` plays and the state it starts from (None: the game's own start)."""
        return self._game(unit.game, unit.condition), None

    def _replies_journaled(self, letter: str) -> bool:
        """Whether a model's replies are journaled (and replay on resume): a person's always (never asked the same
        turn twice), else ``run.journal_calls``, else model calls."""
        wanted, model = self.sweep.run.journal_calls, self.sweep.models[letter]
        return bool(model.is_human or wanted or (wanted is None and model.is_llm))

    def _wrapped(self, letter: str) -> bool:
        """Calls whose replies are journaled, and every paid one (journaled as its cost, and budgeted)."""
        return self.ledger.journal is not None and (self._replies_journaled(letter) or self.sweep.models[letter].is_llm)

    async def play(self, unit: Unit, recorded_calls: list[CallEntry] | None = None) -> GameRecord:
        """One game; ``recorded_calls`` are its replies already paid for (call journal entries), replayed free."""
        recorded = {e.call_id: e for e in recorded_calls or []}
        resumed: set[str] = set()
        game, state = self.start(unit)
        agents: dict[str, Agent] = {}
        for role, letter in unit.letter_of_role.items():
            model = self.sweep.models[letter]
            agent = make_agent(model, self.clients, unit.family, self.desk, seat_id(unit.unit_id, role))
            if self._wrapped(letter):
                replies = self._replies_journaled(letter)
                agent = JournaledAgent(agent, model, unit.unit_id, recorded if replies else {}, replies, self.ledger,
                                       resumed, self.sweep.sends_batched(model))
            agents[role] = agent
        started = utc_now()
        record = await play(game, agents, unit, state)
        await void_failed_calls(self.ledger, record)
        if self.desk is not None:
            for role, letter in unit.letter_of_role.items():
                if self.sweep.models[letter].is_human:
                    await self.desk.end(seat_id(unit.unit_id, role), record.outcome.status)
        for call in record.calls:
            call.resumed = call.call_id in resumed
        return record.model_copy(update={"started_at": started, "ended_at": utc_now()})

    async def play_many(self, jobs: list[Job]) -> list[GameRecord]:
        """The games of ``jobs``, as models: Ray pickles them to the driver, whose store serializes them once."""
        return list(await asyncio.gather(*(self.play(*j) for j in jobs)))

    async def halt(self, failure: Failure) -> None:
        """The run stops after losing one of its actors: no call starts from now on (each game in flight ends
        unknown at its next call with ``failure``); calls already sent finish and are journaled."""
        self.ledger.halted = failure

    async def unjournaled(self) -> list[Entry]:
        """What this worker paid (or voided) while the call journal was gone for good, for the driver to write."""
        entries, self.ledger.unjournaled = self.ledger.unjournaled, []
        return entries

    def holder(self) -> str:
        """The id its slots and reservations are held under (``clients.limiter.holder_id``): its Ray actor's id."""
        return holder_id()

    async def close(self) -> None:
        """Close the sweep's connections and forget its keys and actors (a kept runner holds none until ``bind``)."""
        await self.clients.close()
        self.clients = ClientPool(self.sweep.provider, {})
        self.ledger = Ledger()
        self.desk = None


# Stateless between games: the driver's WorkerPool replaces a lost actor and re-sends its tasks (with the
# replies journaled since they were first sent), so Ray itself neither restarts it nor retries its calls.
RemoteGameRunner = ray.remote(num_cpus=0)(GameRunner)
