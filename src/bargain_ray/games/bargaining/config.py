"""The config of a single-issue price bargaining game (seed 002).

The brief's numbers and the engine's rules are both read from these fields,
so the wording and the scoring cannot disagree.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from bargain_ray.games.kit.turns import MAX_TURNS

ROLES = ("seller", "buyer")

PromptVariant = Literal["default", "explicit_objective"]


class BargainingConfig(BaseModel):
    """One protocol; a condition overrides fields (e.g. ``prompt_variant``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    family: Literal["bargaining"] = "bargaining"
    name: str
    item: str = "a single indivisible item"
    valuation_min: int = 0
    valuation_max: int = 100
    price_min: int = 0
    price_max: int = 100
    decimals: int = Field(2, ge=0)
    first_speaker: Literal["seller", "buyer"] = "seller"
    max_rounds: int = Field(20, ge=1, le=MAX_TURNS)
    discount: float = Field(0.95, gt=0, le=1)
    max_repairs: int = Field(2, ge=0)
    max_message_chars: int = Field(300, ge=1)
    prompt_variant: PromptVariant = "default"

    @model_validator(mode="after")
    def _check(self) -> BargainingConfig:
        if not self.valuation_min <= self.valuation_max:
            raise ValueError("valuation_min must not exceed valuation_max")
        if not self.price_min < self.price_max:
            raise ValueError("price_min must be below price_max")
        return self

    @property
    def roles(self) -> tuple[str, ...]:
        return ROLES

    @property
    def delta(self) -> Fraction:
        """The per-round discount factor, exactly (0.95 is 19/20)."""
        return Fraction(str(self.discount))
