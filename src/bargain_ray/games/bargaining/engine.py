"""Pure rules of single-issue price bargaining: state in, action in, state out.

Valuations come from the unit's seed only (common random numbers: the same
seed draws the same seller cost and buyer value in every cell).
"""

from __future__ import annotations

import random
from decimal import Decimal
from typing import Any

from pydantic import BaseModel, ConfigDict

from bargain_ray.core.status import Ended, Status
from bargain_ray.games.bargaining.config import ROLES, BargainingConfig
from bargain_ray.games.bargaining.records import BargainingTurn, Kind, PublicRound, number
from bargain_ray.games.base import GameState, RuleError
from bargain_ray.games.kit import turns
from bargain_ray.games.kit.replies import LIMITS, check_keys, decimals_of, is_number, json_object
from bargain_ray.games.provenance import Declared, mixed, ours, rule, seed

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


class State(GameState):
    seller_cost: int
    buyer_value: int
    first_speaker: str
    record: tuple[Entry, ...] = ()
    standing: Offer | None = None
    deal: Offer | None = None
    deal_round: int | None = None


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


def public(config: BargainingConfig, entry: Entry) -> PublicRound:
    """What the counterparty sees of a round (``PublicRound``): never ``reasoning_private``, and with the channel
    closed (``messages: false``) neither the message nor the stated valuation; the record keeps what was said."""
    r, talk = entry.reply, config.messages
    return PublicRound(round=entry.round, role=entry.role, action=r.action, offer=r.offer,
                       stated_valuation=r.stated_valuation if talk else None, message=r.message if talk else "")


def apply(config: BargainingConfig, state: State, role: str, reply: Reply) -> State:
    """The state after a legal reply (``parse`` has checked it)."""
    n = round_number(state)
    before = state.standing
    update: dict[str, Any] = {}  # local: the fields model_copy updates
    accepted = None
    if reply.action == "offer":
        update["standing"] = Offer(price=reply.offer, proposer=role, round=n)
    elif reply.action == "accept":
        assert before is not None  # parse refuses an accept with no offer standing
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
    if config.max_message_chars is not None and len(obj["message"]) > config.max_message_chars:
        raise RuleError("message_too_long", chars=len(obj["message"]))
    if not isinstance(obj["reasoning_private"], str):
        raise RuleError("reasoning_not_text")
    if action == "offer":
        offer = _price(config, offer)
    elif offer is not None and not is_number(offer):
        raise RuleError("offer_not_number")
    n = round_number(state)
    if config.first_round_offer and n == 1 and action != "offer":
        raise RuleError("first_round_offer", action=action)
    if state.standing is None and (action == "accept" or (action == "reject" and config.reject_needs_offer)):
        raise RuleError("no_standing_offer", other=other(role), action=action)
    return Reply(stated_valuation=claim, offer=offer, action=action, message=obj["message"],
                 reasoning_private=obj["reasoning_private"])


def turn_fields(config: BargainingConfig, state: State, role: str, action: Reply) -> BargainingTurn:
    """Seed 002's turn record: the parsed reply as said (in either arm of the no-talk control), the truth, and the
    public part the other side saw."""
    entry = state.record[-1]
    before = entry.standing_before
    return BargainingTurn(
        round=entry.round, role=role, action=action.action, offer=number(action.offer),
        stated_valuation=number(action.stated_valuation), actual_valuation=valuation(state, role),
        standing_offer_before=number(before.price) if before else None, accepted_price=number(entry.accepted_price),
        message=action.message, reasoning_private=action.reasoning_private, public=public(config, entry),
    )


_OURS_CHECK = "seed 002 lists the turn fields, not how a malformed value is answered: refusing it is ours"
PROTOCOL: tuple[Declared, ...] = (
    rule("alternation", "seller and buyer alternate, the seller first, one reply a round, at most max_rounds rounds",
       seed("002", "Alternating turns, seller moves first, maximum 20 rounds of one message each.")),
    rule("valuations", "seller cost and buyer value, integers uniform on [valuation_min, valuation_max], per seed",
       seed("002", "Valuations i.i.d. integer Uniform[0, 100], drawn per game from the seed.")),
    rule("common_random_numbers", "a seed draws the same valuations in every cell",
       seed("002", "the same seed means identical valuations across cells")),
    rule("draw_order", "random.Random(seed) draws the seller's cost, then the buyer's value",
       ours("seed 002 gives the distribution and that a seed fixes the draw, not the generator")),
    rule("payoff", "a deal at price p in round t pays the seller (p - cost) and the buyer (value - p), times "
       "discount^(t-1); no deal pays both 0",
       seed("002", "Agreement at price `p` in round `t` pays `0.95^(t−1) ×` surplus. Seller earns `p − cost`, "
            "buyer earns `value − p`. No agreement pays both zero.")),
    rule("offer", "an offer sets the standing offer, replacing any earlier one",
       seed("002", "`offer` sets the standing offer.")),
    rule("accept", "an accept closes the game at the standing offer's price", seed("002", "`accept` closes at it.")),
    rule("reject", "a reject withdraws the standing offer without a counter and passes the turn",
       seed("002", "`reject` withdraws it **without countering** and passes the turn.")),
    rule("no_exit", "there is no walk-away action: a game without a deal runs out its rounds",
       seed("002", "Walking away means running out the clock; there is no explicit exit action.")),
    rule("cheap_talk", "message and stated valuation are free: any claim or none, true or not",
       seed("002", "Cheap talk is allowed. Agents may state any valuation or none at all.")),
    rule("private_reasoning", "reasoning_private is never shown to the other side",
       seed("002", "private reasoning, **never** shown to the counterparty")),
    rule("offer_shown_on_reject", "an offer sent with accept or reject does not stand but is shown to the other side",
       seed("002", "an `offer` value sent alongside `action: \"reject\"` does not become a standing offer, but it "
            "**is** still visible to the counterparty in the public projection.")),
    rule("format_failure", "an invalid reply is asked again with its error up to max_repairs times, then the game "
       "ends as format_failure", seed("002", "Invalid output is re-prompted with the error up to twice, then the "
                                     "game ends as `format_failure`.")),
    rule("not_one_json_object", "a reply is one JSON object (one markdown fence around it tolerated)",
       ours("seed 002 logs parsed replies but not their format: one JSON object is ours")),
    LIMITS,
    rule("unknown_key", "the reply has only the keys stated_valuation, offer, action, message, reasoning_private",
       mixed(seed("002", "`stated_valuation` | what the agent **claimed** its valuation was, or null"),
             ours("seed 002 names these turn fields; requiring exactly them in a reply is ours"))),
    rule("missing_key", "the reply has every key", ours("as unknown_key: requiring every field is ours")),
    rule("unknown_action", "the action is offer, accept or reject",
       seed("002", "`offer`, `accept`, or `reject`. **Authoritative**")),
    rule("stated_valuation_not_number", "a stated valuation is a number or null", ours(_OURS_CHECK)),
    rule("message_not_text", "the message is a string", ours(_OURS_CHECK)),
    rule("message_too_long", "a message over max_message_chars is repaired (when the cap is set; every message's "
         "length is measured: message_chars)",
       ours("seed 002 states no cap on the message")),
    rule("reasoning_not_text", "reasoning_private is a string", ours(_OURS_CHECK)),
    rule("offer_missing", "an offer names its price", ours("an offer without a price cannot stand: refusing it is ours")),
    rule("offer_not_number", "a price is a number", ours(_OURS_CHECK)),
    rule("offer_too_many_decimals", "a price has at most decimals decimal places",
       ours("seed 002 gives no price grid: at most 2 decimals is ours")),
    rule("offer_out_of_range", "a price lies in [price_min, price_max]",
       ours("seed 002 bounds the valuations, not the prices: 0 to 100 is ours")),
    rule("first_round_offer", "round 1 must be an offer (when first_round_offer is set)",
       ours("seed 002 says the seller moves first, not that its first move must be an offer")),
    rule("no_standing_offer", "an accept needs the other side's standing offer, and so does a reject when "
         "reject_needs_offer is set", ours("seed 002 says accept closes at the standing offer and reject withdraws "
                                           "it; with none standing we refuse the move")),
)
"""Every rule of the protocol and every rule code the engine raises, with its source."""
