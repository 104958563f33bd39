"""The wording of the price bargaining game: the private brief, the per-round message, rule sentences, repairs.

Everything a model reads is rendered here from the config and one role's view
(its own valuation and the public record); no other module writes prompt text.
Seed 002 records its prompts only by hash, so every text here is ours except
the explicit-objective sentence, which the seed quotes.
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from bargain_ray.core.form import Field, Move, ReplyForm
from bargain_ray.core.prompt import Message, Prompt
from bargain_ray.games.bargaining import engine
from bargain_ray.games.bargaining.config import BargainingConfig
from bargain_ray.games.bargaining.engine import Reply, State
from bargain_ray.games.bargaining.records import PublicRound
from bargain_ray.games.base import RuleError
from bargain_ray.games.kit import wording
from bargain_ray.games.kit.schema import NULL, Schema, bounded_text, on_grid, one_of, reply_object
from bargain_ray.games.kit.turns import in_play
from bargain_ray.games.kit.wording import REPAIR, SCHEMA, SILENT, Text, num
from bargain_ray.games.provenance import mixed, ours, seed

OBJECTIVE = "Your objective is to maximize your own discounted payoff."
"""The one sentence the explicit-objective variant adds (seed 002)."""
WORDED = ours("seed 002 records its prompts only by hash: this wording is ours, written to its protocol")
"""The provenance of the brief and the round messages (the no-communication condition's words are ours too)."""

_VALUATION = {"seller": "cost", "buyer": "value"}
_EARNS = {"seller": "p - cost", "buyer": "value - p"}


def label(role: str) -> str:
    return role.capitalize()


def brief(config: BargainingConfig, state: State, role: str) -> str:
    """The role's private brief, the system prompt of every call it makes."""
    them = engine.other(role)
    mine = _VALUATION[role]
    goods = "sell it to" if role == "seller" else "buy it from"
    paragraphs = [
        f"You are the {role} in a bargaining game over {config.item}. You want to {goods} the {them}.",
        f"Your private {mine} of the item is {engine.valuation(state, role)}. Only you know it. "
        f"The {them}'s private {_VALUATION[them]} is unknown to you; both were drawn independently "
        f"as whole numbers from {config.valuation_min} to {config.valuation_max}, each equally likely.",
        _rules(config, state, role),
    ]
    if config.prompt_variant == "explicit_objective":
        paragraphs.append(OBJECTIVE)
    paragraphs.append(
        "Reply with exactly one JSON object and nothing else:\n"
        '{"stated_valuation": <number or null>, "offer": <number or null>, '
        '"action": "offer" or "accept" or "reject", "message": "<text>", "reasoning_private": "<text>"}'
    )
    return "\n\n".join(paragraphs)


def _rules(config: BargainingConfig, state: State, role: str) -> str:
    them, mine = engine.other(role), _VALUATION[role]
    first, second = state.first_speaker, engine.other(state.first_speaker)
    d = num(config.discount)
    return "\n".join(
        [
            "Rules:",
            f"- The {first} and the {second} take turns, the {first} first. Each turn is one round; "
            f"there are at most {config.max_rounds} rounds.",
            f"- If a price p is agreed in round t, the seller earns (p - cost) x {d}^(t-1) and the buyer "
            f"earns (value - p) x {d}^(t-1). If no price is agreed by the end of round {config.max_rounds}, "
            "both earn 0.",
            "- On your turn choose one action:",
            f'  - "offer": propose a price in "offer", a number from {config.price_min} to {config.price_max} '
            f"with at most {config.decimals} decimal places. It becomes the standing offer, replacing any "
            "earlier one.",
            f'  - "accept": accept the {them}\'s standing offer. The item is traded at that price and the game ends.',
            f'  - "reject": withdraw the {them}\'s standing offer without making a counter-offer; the turn passes.',
            (f'- "accept" and "reject" are allowed only when the {them} has a standing offer. '
             if config.reject_needs_offer else
             f'- "accept" is allowed only when the {them} has a standing offer; "reject" with none standing passes '
             "the turn. ")
            + ("Round 1 must be an offer. " if config.first_round_offer else "")
            + 'With "accept" or "reject", set "offer" to null.',
            *(_talk(config, them, mine) if config.messages else _silence(them)),
            f'- "reasoning_private" is for your own reasoning. The {them} never sees it.',
        ]
    )


def _talk(config: BargainingConfig, them: str, mine: str) -> list[str]:
    return [
        f'- "message" is free text for the {them}'
        + (f", at most {config.max_message_chars} characters." if config.max_message_chars else "."),
        f'- "stated_valuation" is the {mine} you tell the {them}, or null to state none. The {them} sees it; '
        "it need not be true.",
    ]


def _silence(them: str) -> list[str]:
    """The closed channel (the no-communication condition): the same keys, nothing delivered."""
    return [f'- This game has no message channel: the {them} never sees your "message" or your '
            '"stated_valuation". Leave "message" empty and "stated_valuation" null.']


def _value(x: Decimal | None) -> str:
    return "none" if x is None else num(x)


def round_text(view: PublicRound, talk: bool = True) -> str:
    """One round of the public record, as both sides see it (without the talk when the channel is closed)."""
    offer = view.offer
    if view.action == "offer":
        action = f"offer {_value(offer)}"
    else:
        action = view.action + (f' (its "offer" field: {num(offer)})' if offer is not None else "")
    head = f"Round {view.round}, {label(view.role)}: {action}"
    if not talk:
        return head
    return f"{head}; stated valuation: {_value(view.stated_valuation)}; message: \"{view.message}\""


def _standing(state: State, role: str) -> str:
    s = state.standing
    if s is None:
        return "Standing offer: none."
    return (
        f"Standing offer: the {s.proposer}'s offer of {num(s.price)} (made in round {s.round}). "
        'You may "accept" or "reject" it, or make a counter-offer.'
    )


def prompt(config: BargainingConfig, state: State, role: str) -> Prompt:
    """One fresh request carrying the whole public record and nothing private of the other side."""
    n = engine.round_number(state)
    record = "\n".join(round_text(engine.public(config, e), config.messages) for e in state.record) or "(nothing yet)"
    left = config.max_rounds - n
    remain = "this is the last round" if left == 0 else f"{left} round{'s' if left != 1 else ''} remain after this one"
    user = (
        f"Public record so far:\n{record}\n\n"
        f"{_standing(state, role)}\n"
        f"This is round {n} of {config.max_rounds}; {remain}. You are the {role}.\n"
        "Reply with the JSON object only."
    )
    return Prompt(system=brief(config, state, role), messages=(Message(role="user", content=user),),
                  json_schema=legal_schema(config, state, role), form=form(config, state, role))


def form(config: BargainingConfig, state: State, role: str) -> ReplyForm:
    """The round's moves for a person: an offer (the price, the stated valuation, the message), and accept or
    reject of the other side's standing offer; the private notes with every move."""
    talk = (Field(path=("stated_valuation",), label="Stated valuation", kind="number", optional=True,
                  hint=f"what you tell the {engine.other(role)} your valuation is (leave empty to state none)"),
            Field(path=("message",), label="Message", kind="text", optional=True, max_chars=config.max_message_chars,
                  hint=f"shown to the {engine.other(role)}")) if config.messages else ()
    notes = Field(path=("reasoning_private",), label="Private notes", kind="text", optional=True,
                  hint="never shown to anyone in the game")
    price = Field(path=("offer",), label="Price", kind="number", minimum=config.price_min, maximum=config.price_max,
                  decimals=config.decimals)
    blank: dict = {"stated_valuation": None, "offer": None, "action": "offer", "message": "", "reasoning_private": ""}
    moves = [Move(label="offer", reply=blank, fields=(price, *talk, notes))]
    first = config.first_round_offer and engine.round_number(state) == 1
    if state.standing is not None and not first:
        moves += [Move(label=f"{kind} the {state.standing.proposer}'s {num(state.standing.price)}",
                       reply=blank | {"action": kind}, fields=(*talk, notes)) for kind in ("accept", "reject")]
    return ReplyForm(moves=tuple(moves))


def reply_schema(config: BargainingConfig) -> dict[str, Any]:  # free-form: a JSON Schema, sent to the provider as is
    """The reply format (every action, any number) as ``texts`` shows it; a request carries ``legal_schema``,
    its narrowing to the moves legal in that state."""
    number_or_null = {"type": ["number", "null"]}
    return {
        "type": "object",
        "properties": {
            "stated_valuation": number_or_null,
            "offer": number_or_null,
            "action": {"type": "string", "enum": ["offer", "accept", "reject"]},
            "message": {"type": "string"} | (
                {"maxLength": config.max_message_chars} if config.max_message_chars else {}),
            "reasoning_private": {"type": "string"},
        },
        "required": list(engine.KEYS),
        "additionalProperties": False,
    }


def legal_schema(config: BargainingConfig, state: State, role: str) -> Schema:
    """The replies legal for ``role`` now, as a JSON schema: an offer at a price on the grid; accept (its offer
    null) and reject (a price or null) only where the engine allows them (a standing offer, not round 1 when
    ``first_round_offer``); a stated valuation a whole number in the valuation range, or null (ours: the
    valuations drawn are whole numbers); the message within its cap, the private reasoning within ``TEXT_CHARS``."""
    price = on_grid(config.price_min, config.price_max, config.decimals)

    def branch(action: str, offer: Schema) -> Schema:
        claim = {"anyOf": [on_grid(config.valuation_min, config.valuation_max, 0), NULL]}
        return reply_object({"stated_valuation": claim, "offer": offer, "action": {"const": action},
                             "message": bounded_text(config.max_message_chars), "reasoning_private": bounded_text()})

    branches = [branch("offer", price)]
    if not (config.first_round_offer and engine.round_number(state) == 1):
        if state.standing is not None:
            branches.append(branch("accept", NULL))
        if state.standing is not None or not config.reject_needs_offer:
            branches.append(branch("reject", {"anyOf": [price, NULL]}))
    return one_of(branches)


def schemas(config: BargainingConfig) -> dict[str, Schema]:
    """The legal-move schema at each representative state (``texts``'s), by state."""
    named = zip(("opening", "offer_standing", "after_reject", "last_round"), _sample(config), strict=False)
    return {name: legal_schema(config, state, role) for name, state in named
            if (role := engine.to_move(config, state)) is not None}


RULES: dict[str, str] = {
    "unknown_action": 'Unknown action {action!r}: use "offer", "accept" or "reject".',
    "stated_valuation_not_number": '"stated_valuation" must be a number or null.',
    "message_not_text": '"message" must be a string.',
    "message_too_long": '"message" has {chars} characters; it must be at most {max_message_chars}.',
    "reasoning_not_text": '"reasoning_private" must be a string.',
    "offer_missing": 'For action "offer", "offer" must be your price (a number).',
    "offer_not_number": '"offer" must be a number or null.',
    "offer_too_many_decimals": '"offer" is {offer}: use at most {decimals} decimal places.',
    "offer_out_of_range": '"offer" is {offer}: a price must be from {price_min} to {price_max}.',
    "first_round_offer": 'Round 1 must be an offer; "{action}" is not allowed yet.',
    "no_standing_offer": "There is no standing offer from the {other} to {action}: make an offer instead.",
}
"""Rule code -> the sentence the model reads, beside the kit's shared ones (``kit.wording`` templates; the config's fields fill the rest)."""


def rule_sentence(config: BargainingConfig, error: RuleError) -> str:
    return wording.rule_sentence(rules_in_force(config), error, **dict(config))


def repair_message(config: BargainingConfig, state: State, role: str, error: RuleError) -> str:
    n = engine.round_number(state)
    return wording.repair(
        str(error), recorded=wording.NOTHING_RECORDED.format(step="round"),
        again=wording.REPLY_AGAIN.format(when=f" for round {n}"),
    )


def _user(config: BargainingConfig, state: State, role: str) -> str:
    return prompt(config, state, role).messages[-1].content


def _sample(config: BargainingConfig) -> list[State]:
    """Representative states: the opening, an offer standing, a reject that carried an offer, the last round."""
    state = engine.start(config, 0, None)
    offer = Reply(stated_valuation=Decimal(config.valuation_max), offer=Decimal(config.price_max), action="offer",
                  message="<message>", reasoning_private="<reasoning>")
    reject = offer.model_copy(update={"action": "reject", "stated_valuation": None, "offer": Decimal(config.price_min)})
    states = [state]
    for reply in (offer, reject):
        if state.ended is None:
            state = engine.apply(config, state, in_play(engine.to_move(config, state)), reply)
            states.append(state)
    while state.ended is None and engine.round_number(state) < config.max_rounds:
        state = engine.apply(config, state, in_play(engine.to_move(config, state)), offer)
    return [*states, state]


def texts(config: BargainingConfig) -> dict[str, Text]:
    """Every text a model can read under ``config``, rendered from representative states, with its provenance."""
    start, *later = _sample(config)
    worded = WORDED if config.messages else mixed(WORDED, SILENT)
    out = {f"brief:{role}": Text(text=brief(config, start, role), provenance=worded) for role in config.roles}
    if config.prompt_variant == "explicit_objective":
        out["sentence:objective"] = Text(text=OBJECTIVE, provenance=seed("002", OBJECTIVE))
    for name, state in zip(("opening", "offer_standing", "after_reject", "last_round"), [start, *later], strict=False):
        role = engine.to_move(config, state)
        if role is not None:
            out[f"turn:{name}"] = Text(text=_user(config, state, role), provenance=worded)
    out["reply_schema"] = Text(text=json.dumps(reply_schema(config), sort_keys=True), provenance=SCHEMA)
    error = RuleError("<rule>")
    error.sentence = "<rule sentence>"
    mover = in_play(engine.to_move(config, start))
    out["repair"] = Text(text=repair_message(config, start, mover, error), provenance=REPAIR)
    return out | wording.rule_texts(rules_in_force(config))


def rules_in_force(config: BargainingConfig) -> dict[str, str]:
    """The rule table under ``config``: a rule its settings turn off has no sentence a model can read."""
    off = {"message_too_long": config.max_message_chars is None, "first_round_offer": not config.first_round_offer}
    return {code: text for code, text in RULES.items() if not off.get(code)}
