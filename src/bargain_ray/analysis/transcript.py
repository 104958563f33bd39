"""A journaled game's turns as every reader shows them (the report, the raw logs, the live view): each turn with
its calls, in order, and a call that failed technically (it belongs to no finished turn) as an unfinished turn
of its own, so no paid or failed call is left out of a transcript."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from bargain_ray.core.records import CallRecord, GameRecord, TurnRecord


class ShownTurn(BaseModel):
    """One turn of a transcript: the turn record, the calls it took (repairs included), and whether it is a
    technically failed call that never became a turn."""

    model_config = ConfigDict(frozen=True)

    turn: TurnRecord
    calls: list[CallRecord]
    unfinished: bool = False


def shown_turns(rec: GameRecord) -> list[ShownTurn]:
    """The game's turns with their calls, then each call no turn holds as an unfinished turn (one attempt, invalid)."""
    calls = {c.call_id: c for c in rec.calls}
    out = [ShownTurn(turn=t, calls=[calls[i] for i in t.call_ids if i in calls]) for t in rec.turns]
    placed = {i for t in rec.turns for i in t.call_ids}
    for c in rec.calls:
        if c.call_id not in placed:
            turn = TurnRecord(unit_id=c.unit_id, turn=c.turn, role=c.role, call_ids=[c.call_id], attempts=1, valid=False)
            out.append(ShownTurn(turn=turn, calls=[c], unfinished=True))
    return out
