"""The config of a single-issue price bargaining game (seed 002).

The brief's numbers and the engine's rules are both read from these fields,
so the wording and the scoring cannot disagree.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from bargain_ray.games.kit.replies import MAX_DECIMALS, MAX_SIGNIFICANT, too_long
from bargain_ray.games.kit.turns import MAX_TURNS
from bargain_ray.games.provenance import Setting, ours, seed

ROLES = ("seller", "buyer")

PromptVariant = Literal["default", "explicit_objective"]


class BargainingConfig(BaseModel):
    """One protocol; a condition overrides fields (e.g. ``prompt_variant``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    family: Literal["bargaining"] = "bargaining"
    name: Annotated[str, Setting(ours("the game config's name: a label no model reads"))]
    item: Annotated[str, Setting(ours("seed 002 names no good: the brief's wording is ours"))] = (
        "a single indivisible item")
    valuation_min: Annotated[int, Setting(seed("002", "Valuations i.i.d. integer Uniform[0, 100]"))] = 0
    valuation_max: Annotated[int, Setting(seed("002", "Valuations i.i.d. integer Uniform[0, 100]"))] = 100
    price_min: Annotated[int, Setting(ours("seed 002 bounds the valuations, not the prices: 0 to 100 is ours"))] = 0
    price_max: Annotated[int, Setting(ours("seed 002 bounds the valuations, not the prices: 0 to 100 is ours"))] = 100
    decimals: Annotated[int, Setting(ours("seed 002 gives no price grid: at most 2 decimals is ours")),
                        Field(ge=0, le=MAX_DECIMALS)] = 2
    first_speaker: Annotated[Literal["seller", "buyer"], Setting(seed("002", "seller moves first"))] = "seller"
    max_rounds: Annotated[int, Setting(seed("002", "maximum 20 rounds of one message each")), Field(ge=1, le=MAX_TURNS)] = 20
    discount: Annotated[float, Setting(seed("002", "pays `0.95^(t−1) ×` surplus")), Field(gt=0, le=1)] = 0.95
    max_repairs: Annotated[int, Setting(seed("002", "Invalid output is re-prompted with the error up to twice")),
                           Field(ge=0)] = 2
    max_message_chars: Annotated[int | None, Setting(ours("seed 002 states no cap on the message: 300 characters is "
                                                          "ours; null measures each message's length and enforces "
                                                          "nothing")), Field(ge=1)] = 300
    first_round_offer: Annotated[bool, Setting(ours("seed 002 says the seller moves first, not that its first move "
                                                    "must be an offer: true (refuse an accept or reject in round 1) "
                                                    "is ours"))] = True
    reject_needs_offer: Annotated[bool, Setting(ours("seed 002's reject 'withdraws it' (the standing offer): true "
                                                     "refuses a reject with none standing (ours); false lets it pass "
                                                     "the turn"))] = True
    messages: Annotated[bool, Setting(seed("002", "Cheap talk is allowed."))] = True
    """False closes the cheap-talk channel (the no-communication condition, ours): a reply's message and stated
    valuation are read, recorded and measured as before but never shown to the other side, and the brief says so."""
    prompt_variant: Annotated[PromptVariant, Setting(seed("002", "The prompt variants differ by one sentence."))] = (
        "default")

    @model_validator(mode="after")
    def _check(self) -> BargainingConfig:
        if not self.valuation_min <= self.valuation_max:
            raise ValueError("valuation_min must not exceed valuation_max")
        if not self.price_min < self.price_max:
            raise ValueError("price_min must be below price_max")
        for name in ("price_min", "price_max"):
            if too_long(getattr(self, name), self.decimals):
                raise ValueError(f"{name}={getattr(self, name)} with decimals: {self.decimals} needs more than "
                                 f"{MAX_SIGNIFICANT} significant digits (ours: what a table stores exactly); use a "
                                 "larger unit or fewer decimals")
        return self

    @property
    def roles(self) -> tuple[str, ...]:
        return ROLES

    @property
    def delta(self) -> Fraction:
        """The per-round discount factor, exactly (0.95 is 19/20)."""
        return Fraction(str(self.discount))
