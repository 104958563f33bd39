"""The game loop shared by every family: ask, check, repair, apply, record."""

from __future__ import annotations

from typing import Any

from bargain_ray.agents.base import Agent, Reply, TechnicalFailure
from bargain_ray.games.base import Game, RuleError, Status
from bargain_ray.records import CallRecord, GameRecord, TurnRecord


def _call(unit_id: str, call_id: str, role: str, turn: int, repair: int, reply: Reply, **extra: Any) -> CallRecord:
    return CallRecord(
        call_id=call_id,
        unit_id=unit_id,
        role=role,
        turn=turn,
        repair=repair,
        provider=reply.provider,
        model=reply.model,
        request=reply.request,
        response_text=reply.text,
        stop_reason=reply.stop_reason,
        usage=reply.usage,
        latency_s=reply.latency_s,
        attempts=reply.attempts,
        attempt_errors=reply.attempt_errors,
        request_id=reply.request_id,
        model_version=reply.model_version,
        cost_usd=reply.cost_usd,
        **extra,
    )


async def play(game: Game, agents: dict[str, Agent], unit: dict[str, Any]) -> GameRecord:
    """Run one game to its end; a technical failure ends it unknown, never raises."""
    unit_id = unit["unit_id"]
    state = game.start(unit.get("seed", 0), unit.get("first_speaker"))
    calls: list[CallRecord] = []
    turns: list[TurnRecord] = []
    invalid: list[dict[str, Any]] = []
    repairs = 0
    failure: str | None = None
    turn = 0
    try:
        while (role := game.to_move(state)) is not None:
            turn += 1
            prompt = game.prompt(state, role)
            call_ids: list[str] = []
            for repair in range(game.max_repairs + 1):
                call_id = f"{unit_id}-k{len(calls) + 1:02d}"
                call_ids.append(call_id)
                try:
                    reply = await agents[role].act(prompt, call_id)
                except TechnicalFailure as exc:
                    if exc.reply is not None:
                        calls.append(_call(unit_id, call_id, role, turn, repair, exc.reply, status="error", error=str(exc)))
                    raise
                try:
                    action = game.parse(state, role, reply.text)
                except RuleError as err:
                    calls.append(_call(unit_id, call_id, role, turn, repair, reply, valid=False, rule=err.rule, error=str(err)))
                    invalid.append({"call_id": call_id, "role": role, "turn": turn, "rule": err.rule, "error": str(err)})
                    if repair == game.max_repairs:
                        state = game.exhausted(state, role)
                        turns.append(TurnRecord(unit_id=unit_id, turn=turn, role=role, call_ids=call_ids, attempts=repair + 1, valid=False))
                        break
                    repairs += 1
                    prompt = prompt.repaired(reply.text, game.repair_message(state, role, err))
                    continue
                calls.append(_call(unit_id, call_id, role, turn, repair, reply, valid=True))
                state = game.apply(state, role, action)
                turns.append(
                    TurnRecord(
                        unit_id=unit_id, turn=turn, role=role, call_ids=call_ids, attempts=repair + 1, valid=True,
                        fields=game.turn_fields(state, role, action),
                    )
                )
                break
    except TechnicalFailure as exc:
        failure = str(exc)
    ended = game.ended(state)
    if failure is not None or ended is None:
        status, reason, scored = Status.TECHNICAL_ERROR, failure or "unfinished", {}
    else:
        status, reason, scored = ended.status, ended.reason, game.outcome(state)
    outcome = {
        **{k: unit[k] for k in _IDENTITY if k in unit},
        "calls_attempted": len(calls),
        "repairs_used": repairs,
        "invalid_attempts": invalid,
        **({"bounds": scored.pop("bounds")} if "bounds" in scored else {}),
        "status": status.value,
        "known": status.known,
        "reason": reason,
        "agreement": status == Status.AGREEMENT,
        **scored,
        "technical_pass": status in (Status.AGREEMENT, Status.NO_AGREEMENT),
    }
    return GameRecord(unit=unit, outcome=outcome, turns=turns, calls=calls)


_IDENTITY = (
    "unit_id", "block", "position", "phase", "condition", "pairing", "assignment", "cell",
    "models_by_role", "agent_of_role", "first_speaker",
)
