"""What a scorable game records: each turn's fields and its scored outcome (figures as ``core.figures`` pairs)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, SerializerFunctionWrapHandler, model_serializer

from bargain_ray.core.figures import Figure
from bargain_ray.core.records import FamilyFields, FamilyOutcome

Kind = Literal["propose", "accept", "reject", "walk", "none"]


class ScorableTurn(FamilyFields):
    """The turn record's family columns: the move, its round and offer id, the message and the private scratchpad."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    action: Kind
    round: int
    offer_id: str | None
    deal: dict[str, str] | None
    message: str
    scratchpad: str
    closed_deal: bool


class Deal(BaseModel):
    """The offer that closed the game: its id, who tabled it, who supported it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    offer_id: str
    proposer: str
    supporters: list[str]


class BestFeasible(BaseModel):
    """The feasible package with the best welfare (the first in enumeration order on ties)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    options: dict[str, str]
    welfare: Figure
    joint_surplus: Figure


class Placement(BaseModel):
    """Figures of the whole deal space and where the chosen deal stands in it (all null when the space is too large
    to enumerate)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    deals_enumerated: int | None
    feasible_deals: int | None
    best_feasible: BestFeasible | None
    pareto_optimal: bool | None


class ScorableOutcome(FamilyOutcome):
    """The scored outcome: the deal, the game's course, the deal space's figures, each party's score and surplus.

    ``space_error`` is written only when the deal space was too large to enumerate (after ``deals_enumerated``). A
    game without a result to score (a format failure) has every score null and writes ``below_threshold`` last
    (``welfare`` is null only then): the order the record has always had."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    deal: Deal | None
    options: dict[str, str] | None
    first_opener: str
    walked: list[str]
    offers_tabled: int
    rounds_played: int
    deals_enumerated: int | None
    space_error: str | None = None
    feasible_deals: int | None
    best_feasible: BestFeasible | None
    pareto_optimal: bool | None
    scores: dict[str, Figure] | None
    surplus: dict[str, Figure] | None
    below_threshold: list[str]
    welfare: Figure | None
    joint_surplus: Figure | None
    welfare_ratio: Figure | None
    surplus_ratio: Figure | None

    @model_serializer(mode="wrap")
    def _as_written(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:  # free-form: a serializer's JSON output
        data = handler(self)
        if data.get("space_error") is None:
            data.pop("space_error", None)
        if self.welfare is None:
            data["below_threshold"] = data.pop("below_threshold")
        return data
