"""A unit: one game of the design, named and fingerprinted."""

from __future__ import annotations

from typing import Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field


class Unit(BaseModel):
    """Everything that identifies one game and, through ``hash``, determines it.

    A design's units give every field (the design builds them; nothing is defaulted, so a unit
    never lacks what tables it or what its resume compares). A replayed transcript has no design:
    ``for_replay`` names what it lacks.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    unit_id: str
    experiment: str
    game: str
    family: str
    block: int
    position: int
    phase: str = "main"
    condition: str
    pairing: str
    assignment: int
    cell: str
    seed: int
    first_speaker: str | None
    models_by_role: dict[str, str]
    """role -> the model's name (seed 001's field)."""
    letter_of_role: dict[str, str] = Field(validation_alias=AliasChoices("letter_of_role", "model_of_role"))
    """role -> the pairing letter of its model (a key of ``models``); journal format 2 named it ``model_of_role``."""
    agent_of_role: dict[str, str]
    """role -> the agent (A, B, ...) of the assignment (seed 001's field)."""
    hash: str
    """Digest of what determines the game and the labels it is tabled under; a resume skips a finished
    unit only when its journaled hash equals this one."""

    @classmethod
    def for_replay(cls, game: str, family: str, seed: int = 0, first_speaker: str | None = None,
                   **given: Any) -> Unit:
        """The unit of a re-scored transcript: what the replay file gives (``given``: identity fields,
        e.g. seed 001's unit), the rest defaulted (ours): ``replay-<game>``, block and position 0, empty
        labels and model maps, no hash (a replay is never resumed, so nothing compares one)."""
        defaults: dict[str, Any] = {  # local: the fields a replay lacks, validated by Unit below
            "unit_id": f"replay-{game}", "experiment": "replay", "block": 0, "position": 0, "condition": "",
            "pairing": "", "assignment": 0, "cell": "", "models_by_role": {}, "letter_of_role": {},
            "agent_of_role": {}, "hash": "",
        }
        return cls.model_validate(defaults | {"game": game, "family": family, "seed": seed,
                                              "first_speaker": first_speaker} | given)
