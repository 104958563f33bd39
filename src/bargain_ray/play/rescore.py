"""Re-score a recorded game: its replies fed in call order through the game's engine."""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator

from bargain_ray.agents.replay import ReplayAgent
from bargain_ray.core.records import GameRecord
from bargain_ray.core.unit import Unit
from bargain_ray.games import load_game
from bargain_ray.games.provenance import Declared, ours, rule, seed
from bargain_ray.play.loop import play

SEED_IDENTITY = (
    "unit_id", "block", "position", "phase", "condition", "pairing", "assignment", "cell",
    "models_by_role", "agent_of_role", "first_speaker",
)
"""The unit fields seed 001's recorded outcome opens with, in its order."""
PROTOCOL: tuple[Declared, ...] = (
    rule("replay_record", "a replay prints the unit's identity, then the outcome, in seed 001's key order",
         seed("001", '"unit_id": "negotiation-c3rep40-20261027-b04-p04-oo-a3", "block": 4, "position": 4,')),
    rule("replay_identity", "the identity a replay prints comes from its file (tests/data/seed001_replay.json "
         "copies seed 001's), never from a design",
         ours("seed 001's block shuffle is not recoverable: our design puts HO-a3, not OO-a3, at b04-p04")),
)
"""What a replay prints, with its sources."""


class ReplayFile(BaseModel):
    """``{"game": NAME, "first_speaker": ROLE, "replies": [...], "overrides": [...]}`` (the replay contract);
    ``seed`` and ``unit`` (identity fields of ``Unit``, e.g. seed 001's) are optional."""

    model_config = ConfigDict(extra="forbid")

    game: str
    first_speaker: str | None = None
    replies: list[str]
    overrides: list[str] = []
    seed: int = 0
    unit: dict[str, Any] = {}  # free-form: Unit fields by name, typed when the Unit is built (Unit.for_replay)

    @field_validator("unit")
    @classmethod
    def _unit_fields(cls, unit: dict[str, Any]) -> dict[str, Any]:  # free-form: Unit fields by name, checked against Unit's
        unknown = [k for k in unit if k not in Unit.model_fields]
        if unknown:
            raise ValueError(f"unknown unit field {unknown[0]!r}; unit fields: {', '.join(Unit.model_fields)}")
        return unit


def _replay(spec: ReplayFile) -> tuple[GameRecord, int]:
    """The game the replies play, and how many replies it left unused."""
    from bargain_ray.config.compose import compose_dict  # Hydra: loaded to replay, not in every actor importing play

    config = compose_dict(f"game/{spec.game}", spec.overrides)["game"]
    game = load_game(config)
    queue = deque(spec.replies)
    agent = ReplayAgent(queue)
    unit = Unit.for_replay(spec.game, str(config["family"]), spec.seed, spec.first_speaker, **spec.unit)
    record = asyncio.run(play(game, dict.fromkeys(game.roles, agent), unit))
    return record, len(queue)


def replay_transcript(spec: ReplayFile) -> GameRecord:
    """Play the recorded replies through the game's engine."""
    return _replay(spec)[0]


def outcome_record(spec: ReplayFile) -> dict[str, Any]:  # free-form: JSON as printed (the replay contract, in seed 001's key order)
    """The outcome record the replay contract prints, as seed 001 records it: the unit's identity (the
    fields the file gave, its id and first speaker always), then the outcome; ``unused_replies`` last
    when the game ended before the replies did (ours)."""
    record, unused = _replay(spec)
    given = {"unit_id", "first_speaker", *spec.unit}
    unit = record.unit.model_dump(mode="json")
    identity = {k: unit[k] for k in SEED_IDENTITY if k in given}
    return identity | record.outcome.model_dump(mode="json") | ({"unused_replies": unused} if unused else {})


def replay_record(config: dict[str, Any], record: GameRecord) -> GameRecord:  # free-form: the game config as the manifest fixed it
    """A journaled game played again under the game config it was played with: its unit as journaled, its
    replies (every call's text, repairs included) fed in call order."""
    game = load_game(config)
    agent = ReplayAgent(deque(recorded_replies(record)))
    return asyncio.run(play(game, dict.fromkeys(game.roles, agent), record.unit))


def recorded_replies(record: GameRecord) -> list[str]:
    """The texts of a journaled game's calls in call order (a call that failed has none)."""
    return [c.response_text for c in record.calls if c.response_text is not None]
