"""The game loop shared by every family: ask, check, repair, apply, record."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypeVar

from bargain_ray.agents.base import Agent
from bargain_ray.core.errors import Failure, FailureKind, TechnicalFailure
from bargain_ray.core.records import CallRecord, FamilyOutcome, GameRecord, InvalidAttempt, Outcome, Reply, TurnRecord
from bargain_ray.core.status import Status
from bargain_ray.core.unit import Unit
from bargain_ray.games.base import Game, GameState, RuleError
from bargain_ray.games.provenance import Declared, ours, rule, seed

PROTOCOL: tuple[Declared, ...] = (
    rule("technical_failure", "a game a technical failure ends (an API error after retries, an interruption) is "
         "unknown and unscored, never a disagreement",
         seed("000", "The outcome is unknown and is not scored.")),
    rule("rerun_unknown", "an unknown game is played again on resume; the replies it paid for are replayed",
         ours("seed 000 records an unknown game; playing it again on resume, paid replies replayed, is ours")),
    rule("call_ids", "each call is named <unit id>-k<nn>, repairs included",
         seed("001", "negotiation-c3rep40-20261027-b04-p04-oo-a3-k01")),
    rule("repair", "an invalid reply is answered in the same request: the reply and the repair message appended",
         ours("no seed shows a repaired request: appending the reply and our repair message is ours")),
)
"""The rules the loop applies to every family, with their sources."""

S = TypeVar("S", bound=GameState)


@dataclass
class _Log:
    """What a game leaves behind as it is played."""

    unit_id: str
    calls: list[CallRecord] = field(default_factory=list)
    turns: list[TurnRecord] = field(default_factory=list)
    invalid: list[InvalidAttempt] = field(default_factory=list)
    repairs: int = 0

    def next_call_id(self) -> str:
        return f"{self.unit_id}-k{len(self.calls) + 1:02d}"

    def call(self, call_id: str, role: str, turn: int, repair: int, reply: Reply, **extra: Any) -> None:
        fields = reply.model_dump(exclude={"text"})
        self.calls.append(CallRecord(
            call_id=call_id, unit_id=self.unit_id, role=role, turn=turn, repair=repair,
            response_text=reply.text, **fields, **extra,
        ))


async def _turn(game: Game[Any, S, Any], agent: Agent, state: S, role: str, turn: int, log: _Log) -> S:
    """One turn: ask, and on a broken rule ask again with the error, up to ``max_repairs`` times."""
    prompt = game.prompt(state, role)
    call_ids: list[str] = []
    for repair in range(game.max_repairs + 1):
        call_id = log.next_call_id()
        call_ids.append(call_id)
        try:
            reply = await agent.act(prompt, call_id)
        except TechnicalFailure as exc:
            if exc.reply is not None:
                log.call(call_id, role, turn, repair, exc.reply, status="error", error=str(exc))
            raise
        try:
            action = game.parse(state, role, reply.text)
        except RuleError as err:
            log.call(call_id, role, turn, repair, reply, valid=False, rule=err.rule, error=str(err))
            log.invalid.append(InvalidAttempt(call_id=call_id, role=role, turn=turn, rule=err.rule, error=str(err)))
            if repair < game.max_repairs:
                log.repairs += 1
                prompt = prompt.repaired(reply.text, game.repair_message(state, role, err))
            continue
        log.call(call_id, role, turn, repair, reply, valid=True)
        state = game.apply(state, role, action)
        log.turns.append(TurnRecord(
            unit_id=log.unit_id, turn=turn, role=role, call_ids=call_ids, attempts=repair + 1, valid=True,
            fields=game.turn_fields(state, role, action),
        ))
        return state
    log.turns.append(TurnRecord(
        unit_id=log.unit_id, turn=turn, role=role, call_ids=call_ids, attempts=len(call_ids), valid=False,
    ))
    return game.exhausted(state, role)


async def play(game: Game, agents: dict[str, Agent], unit: Unit, state: GameState | None = None) -> GameRecord:
    """Run one game to its end, from its start or from ``state`` (a finished transcript a judging read asks its
    observer about); a technical failure ends it unknown, never raises."""
    log = _Log(unit.unit_id)
    state = game.start(unit.seed, unit.first_speaker) if state is None else state
    failure: Failure | None = None
    turn = 0
    try:
        while (role := game.to_move(state)) is not None:
            turn += 1
            state = await _turn(game, agents[role], state, role, turn, log)
    except TechnicalFailure as exc:
        failure = exc.failure
    ended = game.ended(state)
    if failure is not None or ended is None:
        failure = failure or Failure(kind=FailureKind.UNFINISHED, detail="unfinished")
        status, reason, scored, bounds = Status.TECHNICAL_ERROR, str(failure), FamilyOutcome(), None
    else:
        status, reason, scored, bounds = ended.status, ended.reason, game.outcome(state), game.outcome_bounds()
        if ended.failure is not None:
            failure = Failure(kind=ended.failure, detail=ended.reason)
    outcome = Outcome(
        calls_attempted=len(log.calls), repairs_used=log.repairs, invalid_attempts=log.invalid,
        bounds=bounds, status=status, known=status.known, reason=reason,
        agreement=status == Status.AGREEMENT, failure=failure, scored=scored,
        technical_pass=status in (Status.AGREEMENT, Status.NO_AGREEMENT),
    )
    record = GameRecord(unit=unit, outcome=outcome, turns=log.turns, calls=log.calls)
    return with_figures(game, record)


def with_figures(game: Game, record: GameRecord) -> GameRecord:
    """``record`` with the family's per-game and per-turn figures, computed by this code from the typed
    record alone (as it ends, and again by ``rescore`` from the journal); a game without a known result
    has none."""
    if not record.outcome.known:
        return record.model_copy(update={"metrics": {}, "turn_metrics": []})
    typed = game.typed(record)  # once: both figures read the family's models
    turns = game.turn_metrics(typed)
    return record.model_copy(update={"metrics": game.game_metrics(typed, turns), "turn_metrics": turns})
