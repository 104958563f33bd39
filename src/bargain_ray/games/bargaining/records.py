"""What a bargaining game records: each turn's fields (seed 002's turn record) and its scored outcome.

Prices and claims are the exact decimals the model wrote; a record writes them as JSON numbers (``number``),
and the figures of the outcome as ``core.figures`` pairs, in an order of ours (seed 002 says only that a
game's last raw line holds its "outcome, price, payoffs"; it gives no key order).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, PlainSerializer

from bargain_ray.core.figures import Figure
from bargain_ray.core.records import FamilyFields, FamilyOutcome

Kind = Literal["offer", "accept", "reject"]
Number = int | float
"""A price or a claim as a record holds it: the JSON number ``number`` writes (what the figures are computed from,
so a game scores alike as played and as read back)."""


def number(x: Decimal | None) -> Number | None:
    """A decimal as a JSON number (prices have few decimals, so floats round-trip)."""
    if x is None:
        return None
    return int(x) if x == x.to_integral_value() else float(x)


Shown = Annotated[Decimal, PlainSerializer(number)]
"""A decimal the other side was shown: exact for the prompt, a JSON number in the record."""


class PublicRound(BaseModel):
    """What the counterparty sees of a round: never ``reasoning_private``.

    As in seed 002, an ``offer`` sent with accept or reject is shown although only the action counts (the
    dataset's documented quirk)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    round: int
    role: str
    action: Kind
    offer: Shown | None
    stated_valuation: Shown | None
    message: str


class BargainingTurn(FamilyFields):
    """Seed 002's turn record: the parsed reply, the truth, and the public part the other side saw."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    round: int
    role: str
    action: Kind
    offer: Number | None
    stated_valuation: Number | None
    actual_valuation: int
    standing_offer_before: Number | None
    accepted_price: Number | None
    message: str
    reasoning_private: str
    public: PublicRound


class BargainingOutcome(FamilyOutcome):
    """The scored part of a game's outcome; payoffs are exact fractions (no deal: price, round, discount and
    proposer null, payoffs 0)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    seller_cost: int
    buyer_value: int
    available_surplus: int
    prompt_variant: str
    rounds_played: int
    failed_role: str | None
    price: Figure | None
    round: int | None
    discount: Figure | None
    proposer: str | None
    seller_payoff: Figure
    buyer_payoff: Figure
    joint_payoff: Figure
