"""A unit: one game of the design, named and fingerprinted."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Unit(BaseModel):
    """Everything that identifies one game and, through ``hash``, determines it."""

    model_config = ConfigDict(frozen=True)

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
    model_of_role: dict[str, str]
    agent_of_role: dict[str, str]
    hash: str
    """Digest of what determines the game and the labels it is tabled under; a resume skips a finished
    unit only when its journaled hash equals this one."""
