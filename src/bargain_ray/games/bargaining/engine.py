"""Pure rules of single-issue price bargaining: state in, action in, state out.

Valuations come from the unit's seed only (common random numbers: the same
seed draws the same seller cost and buyer value in every cell).
"""

from __future__ import annotations

import random
from decimal import Decimal
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from bargain_ray.core.status import Ended, Status
from bargain_ray.games.bargaining.config import ROLES, BargainingConfig
from bargain_ray.games.base import RuleError
from bargain_ray.games.kit import turns
from bargain_ray.games.kit.replies import check_keys, decimals_of, is_number, json_object

Kind = Literal["offer", "accept", "reject"]
KEYS = ("stated_valuation", "offer", "action", "message", "reasoning_private")


class Reply(BaseModel):
    """A parsed, legal reply; numbers are the exact decimals the model wrote."""

    model_config = ConfigDict(frozen=True)

    stated_valuation: Decimal | None
    offer: Decimal | None
    action: Kind
    message: str
    reasoning_private: str


class Offer(BaseModel):
    model_config = ConfigDict(frozen=True)

    price: Decimal
    proposer: str
    round: int


class Entry(BaseModel):
    """One played round: the reply and what stood before it."""

    model_config = ConfigDict(frozen=True)

    round: int
    role: str
    reply: Reply
    standing_before: Offer | None
    accepted_price: Decimal | None = None


class State(BaseModel):
    model_config = ConfigDict(frozen=True)

    seller_cost: int
    buyer_value: int
    first_speaker: str
    record: tuple[Entry, ...] = ()
    standing: Offer | None = None
    deal: Offer | None = None
    deal_round: int | None = None
    ended: Ended | None = None
    failed_role: str | None = None


def draw(config: BargainingConfig, seed: int) -> tuple[int, int]:
    """(seller cost, buyer value): integers Uniform[min, max], seller first, from the seed alone."""
    rng = random.Random(seed)
    lo, hi = config.valuation_min, config.valuation_max
    return rng.randint(lo, hi), rng.randint(lo, hi)


def start(config: BargainingConfig, seed: int, first_speaker: str | None) -> State:
    speaker = turns.opening_role(ROLES, first_speaker, config.first_speaker, config.name)
    cost, value = draw(config, seed)
    return State(seller_cost=cost, buyer_value=value, first_speaker=speaker)


def other(role: str) -> str:
    return turns.other(ROLES, role)


def valuation(state: State, role: str) -> int:
    return state.seller_cost if role == "seller" else state.buyer_value


def round_number(state: State) -> int:
    """The round about to be played."""
    return len(state.record) + 1


def to_move(config: BargainingConfig, state: State) -> str | None:
    if state.ended is not None:
        return None
    return turns.alternating(ROLES, state.first_speaker, len(state.record))


def public(entry: Entry) -> dict[str, Any]:
    """What the counterparty sees of a round: never ``reasoning_private``.

    As in seed 002, an ``offer`` sent with accept or reject is shown although
    only the action counts (the dataset's documented quirk).
    """
    r = entry.reply
    return {
        "round": entry.round,
        "role": entry.role,
        "action": r.action,
        "offer": r.offer,
        "stated_valuation": r.stated_valuation,
        "message": r.message,
    }


def number(x: Decimal | None) -> int | float | None:
    """A decimal as a JSON number (prices have few decimals, so floats round-trip)."""
    if x is None:
        return None
    return int(x) if x == x.to_integral_value() else float(x)


def apply(config: BargainingConfig, state: State, role: str, reply: Reply) -> State:
    """The state after a legal reply (``parse`` has checked it)."""
    n = round_number(state)
    before = state.standing
    update: dict[str, Any] = {}
    accepted = None
    if reply.action == "offer":
        update["standing"] = Offer(price=reply.offer, proposer=role, round=n)
    elif reply.action == "accept":
        accepted = before.price
        update |= {"standing": None, "deal": before, "deal_round": n,
                   "ended": Ended(status=Status.AGREEMENT, reason="agreement")}
    else:
        update["standing"] = None
    if reply.action != "accept" and n == config.max_rounds:
        update["ended"] = Ended(status=Status.NO_AGREEMENT, reason="round_limit")
    entry = Entry(round=n, role=role, reply=reply, standing_before=before, accepted_price=accepted)
    return state.model_copy(update=update | {"record": (*state.record, entry)})


def exhausted(config: BargainingConfig, state: State, role: str) -> State:
    """Repairs ran out: the protocol ended the game."""
    return turns.format_failure(state, role)


def _price(config: BargainingConfig, offer: object) -> Decimal:
    if offer is None:
        raise RuleError("offer_missing")
    if not is_number(offer):
        raise RuleError("offer_not_number")
    if decimals_of(offer) > config.decimals:
        raise RuleError("offer_too_many_decimals", offer=offer)
    if not config.price_min <= offer <= config.price_max:
        raise RuleError("offer_out_of_range", offer=offer)
    return offer


def parse(config: BargainingConfig, state: State, role: str, text: str) -> Reply:
    """The legal reply in ``text``; raises RuleError naming the broken rule."""
    obj = json_object(text, fence=True, exact=True)
    check_keys(obj, KEYS)
    action, offer, claim = obj["action"], obj["offer"], obj["stated_valuation"]
    if action not in ("offer", "accept", "reject"):
        raise RuleError("unknown_action", action=action)
    if claim is not None and not is_number(claim):
        raise RuleError("stated_valuation_not_number")
    if not isinstance(obj["message"], str):
        raise RuleError("message_not_text")
    if len(obj["message"]) > config.max_message_chars:
        raise RuleError("message_too_long", chars=len(obj["message"]))
    if not isinstance(obj["reasoning_private"], str):
        raise RuleError("reasoning_not_text")
    if action == "offer":
        offer = _price(config, offer)
    elif offer is not None and not is_number(offer):
        raise RuleError("offer_not_number")
    n = round_number(state)
    if n == 1 and action != "offer":
        raise RuleError("first_round_offer", action=action)
    if action != "offer" and state.standing is None:
        raise RuleError("no_standing_offer", other=other(role), action=action)
    return Reply(
        stated_valuation=claim, offer=offer, action=action,
        message=obj["message"], reasoning_private=obj["reasoning_private"],
    )
