"""The config of a single-issue price bargaining game (seed 002).

The brief's numbers and the engine's rules are both read from these fields,
so the wording and the scoring cannot disagree.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Literal

from pydantic import BaseModel, ConfigDict, model_validator

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
    decimals: int = 2
    first_speaker: Literal["seller", "buyer"] = "seller"
    max_rounds: int = 20
    discount: float = 0.95
    max_repairs: int = 2
    max_message_chars: int = 300
    prompt_variant: PromptVariant = "default"

    @model_validator(mode="after")
    def _check(self) -> BargainingConfig:
        if not self.valuation_min <= self.valuation_max:
            raise ValueError("valuation_min must not exceed valuation_max")
        if not self.price_min < self.price_max:
            raise ValueError("price_min must be below price_max")
        if not 0 < self.delta <= 1:
            raise ValueError("discount must be in (0, 1]")
        if self.max_rounds < 1:
            raise ValueError("max_rounds must be at least 1")
        return self

    @property
    def roles(self) -> tuple[str, ...]:
        return ROLES

    @property
    def delta(self) -> Fraction:
        """The per-round discount factor, exactly (0.95 is 19/20)."""
        return Fraction(str(self.discount))
