"""The wording of the scorable negotiation: seed 003's private prompt, the per-turn record, repairs.

The system prompt is seed 003's word for word (its quirks included: the veto
mark and the "hold a veto" line are the seed's). Ours, not the seed's: the
private-information sentence (the seed shows public score sheets only), the
per-turn user message (seed 003 does not show one; it is written in the style
of seed 000's public record), the rule sentences and the repair message.
A party's scratchpad is never rendered, not even back to itself.
"""

from __future__ import annotations

import json
from itertools import product
from math import prod
from typing import Any

from bargain_ray.core.form import Field, Move, ReplyForm
from bargain_ray.core.prompt import Message, Prompt
from bargain_ray.games.base import RuleError
from bargain_ray.games.kit import wording
from bargain_ray.games.kit.schema import Schema, bounded_text, one_of, reply_object
from bargain_ray.games.kit.turns import in_play
from bargain_ray.games.kit.wording import REPAIR, SCHEMA, SILENT, Text, framed, num
from bargain_ray.games.provenance import mixed, ours, seed
from bargain_ray.games.scorable import engine
from bargain_ray.games.scorable.config import ScorableConfig
from bargain_ray.games.scorable.engine import Action, Entry, Offer, State

VETO_MARK = " (veto party — no deal passes without you)"

PUBLIC_INFORMATION = (
    "Information: every party's score sheet is common knowledge and is listed below — there is no private "
    "information, so any inefficiency is a pure negotiation failure."
)
PRIVATE_INFORMATION = (
    "Information: every party's score sheet and threshold are private — you see only your own, below; what "
    "others say about theirs is cheap talk."
)

SPOKEN = ('- "message" (optional): a short statement spoken aloud to every party (cheap talk — it does not bind you). '
          "Do NOT put your private score numbers here.")
UNSPOKEN = ('- "message" (optional): the message channel is closed in this game: nothing you write here reaches any '
            "party.")
"""Seed 003's message field, and ours for the no-communication condition (every other word of the format kept)."""

REPLY_FORMAT = """On your turn, reply with EXACTLY ONE fenced JSON object and nothing outside it:
```json
{"scratchpad": "...", "message": "...", "action": "propose", "deal": {"<Issue>": "<Option>", ...}}
```
Fields:
- "scratchpad" (optional): private notes to yourself. NEVER shown to any other party. Reason here freely — writing here is not speaking and costs you nothing.
- "message" (optional): a short statement spoken aloud to every party (cheap talk — it does not bind you). Do NOT put your private score numbers here.
- "action" (required): a string naming exactly one formal move this turn. With its parameters as siblings:
    - "propose" + "deal": {every issue -> one option} — tables a complete package; the mediator gives it an offer id (P1, P2, ...) and records you as supporting it.
    - "accept" + "offer_id": "<id>" — formally accept a specific live offer by its id. A deal closes ONLY when every other still-active party has accepted the SAME live offer, so your accept is a real vote.
    - "reject" + "offer_id": "<id>" — formally reject a specific live offer.
    - "walk" — leave the table permanently; you take the no-deal outcome and no further turns.
    - "none" — make no formal move this turn (you may still speak, if the message channel is open). Omitting the action entirely means the same.

Worked example — tabling a package while making your case:
```json
{"scratchpad": "Option B on Site is my best; I can give on Timeline.", "message": "I can back a package built on Site=B if the timeline stays tight.", "action": "propose", "deal": {"Site": "B", "Timeline": "Tight"}}
```
Worked example — accepting a live offer by id:
```json
{"message": "P2 clears my bar. I accept.", "action": "accept", "offer_id": "P2"}
```

Rules of the road:
- Your acceptance threshold is private. A deal scoring below it is worse for you than no deal — never propose or accept a package below your threshold.
- Accepts MUST name a live offer id; "I accept" with no id does nothing.
- Reply with ONLY the fenced JSON object."""


def sheet(config: ScorableConfig, party: str) -> str:
    """A score sheet, one line per issue: ``- issue0: opt0=0, opt1=0, opt2=0``."""
    scores = config.parties[party].scores
    return "\n".join(
        f"- {i.name}: " + ", ".join(f"{o}={num(scores[i.name][o])}" for o in i.options) for i in config.issues
    )


def _and(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def system(config: ScorableConfig, role: str) -> str:
    """The party's private prompt, the system prompt of every call it makes (seed 003)."""
    parties = "\n".join(f"- {p}{VETO_MARK if p in config.veto else ''}" for p in config.parties)
    issues = "\n".join(f"- {i.name}: {', '.join(i.options)}" for i in config.issues)
    protocol = [
        f"Protocol: turns are taken in a fixed rotation ({', '.join(config.parties)}); the party who tables the "
        f"opening proposal rotates from round to round. There are {config.rounds} rounds of turns in total.",
        "A deal closes only when every party still at the table has formally ACCEPTed the SAME standing offer. "
        "A party may WALK to leave for good and take its no-deal outcome.",
    ]
    if config.veto:
        protocol.append(f"{_and(list(config.veto))} hold a veto: no deal can pass unless every veto party accepts.")
    blocks = [
        f"You are one of {len(config.parties)} parties negotiating a single multi-issue agreement. Exactly one "
        "option must be chosen for every issue; the chosen options together form the deal.",
        f"Parties at the table:\n{parties}",
        f"Issues (choose exactly one option each):\n{issues}",
        "\n".join(protocol),
    ]
    if config.public_score_sheets:
        sheets = "\n\n".join(
            f"{p} (threshold {num(config.parties[p].threshold)}):\n{sheet(config, p)}" for p in config.parties
        )
        blocks += [PUBLIC_INFORMATION, f"All parties' score sheets (common knowledge):\n{sheets}"]
    else:
        blocks.append(PRIVATE_INFORMATION)
    blocks += [
        "=== PRIVATE — yours alone; never reveal these numbers verbatim ===\n"
        f"You are {role}.\n"
        f"Your secret score sheet (points you get for each option):\n{sheet(config, role)}\n"
        f"Your acceptance threshold: {num(config.parties[role].threshold)} points. "
        "A deal scoring below this is worse for you than no deal at all.\n"
        "Your total for a deal is the sum of your points for the chosen options.",
        REPLY_FORMAT if config.messages else REPLY_FORMAT.replace(SPOKEN, UNSPOKEN),
    ]
    return "\n\n".join(blocks)


def package(config: ScorableConfig, deal: dict[str, str]) -> str:
    return ", ".join(f"{i.name}={deal[i.name]}" for i in config.issues)


def _move(config: ScorableConfig, e: Entry) -> str:
    a = e.action
    if a.kind == "propose":
        return f"propose → {e.offer_id} ({package(config, a.deal or {})})"
    if a.kind in ("accept", "reject"):
        return f"{a.kind} {e.offer_id}"
    if a.kind == "walk":
        return "walk (left the table for good)"
    return "none"


def _record(config: ScorableConfig, state: State) -> str:
    if not state.record:
        return "(nothing yet)"
    lines = []
    for e in state.record:
        said = json.dumps(e.action.message, ensure_ascii=False) if e.action.message and config.messages else (
            "(no message)")
        lines += [f"Round {e.round}, {e.role}: {said}", f"  Action: {_move(config, e)}"]
    return "\n".join(lines)


def _votes(config: ScorableConfig, state: State, o: Offer) -> str:
    table = engine.at_table(config, state)
    parts = []
    for label, names in (
        ("accepted by", [p for p in table if p in o.supporters]),
        ("rejected by", [p for p in table if p in o.rejecters]),
        ("no answer yet from", [p for p in table if p not in o.supporters and p not in o.rejecters]),
    ):
        if names:
            parts.append(f"{label} {', '.join(names)}")
    text = "; ".join(parts)
    return f"{text[0].upper()}{text[1:]}."


def _offers(config: ScorableConfig, state: State) -> str:
    if not state.offers:
        return "Live offers: none yet."
    lines = ["Live offers (each stays live until the game ends):"]
    for o in state.offers:
        lines += [f"- {o.offer_id}, tabled by {o.proposer}: {package(config, o.deal)}", f"  {_votes(config, state, o)}"]
    return "\n".join(lines)


def _turn(config: ScorableConfig, state: State, role: str) -> str:
    movers = engine.order(config, state)
    last = " This is the last round." if state.round == config.rounds else ""
    return (
        f"Round {state.round} of {config.rounds}; this round's order: {', '.join(movers)} "
        f"({movers[0]} opens).{last}\n"
        f"It is your turn, {role}. Reply with ONLY the fenced JSON object."
    )


def user(config: ScorableConfig, state: State, role: str) -> str:
    """The public record as of this turn: what every party said and did, live offers, who is left."""
    walked = ", ".join(state.walked) or "none"
    return (
        f"Public record so far:\n{_record(config, state)}\n\n"
        f"{_offers(config, state)}\n\n"
        f"Still at the table: {', '.join(engine.at_table(config, state))}. Walked: {walked}.\n"
        f"{_turn(config, state, role)}"
    )


def prompt(config: ScorableConfig, state: State, role: str) -> Prompt:
    """One fresh request: the private prompt and the public record, nothing of another party's notes."""
    return Prompt(
        system=system(config, role),
        messages=(Message(role="user", content=user(config, state, role)),),
        json_schema=legal_schema(config, state, role),
        form=form(config, state, role),
    )


def form(config: ScorableConfig, state: State, role: str) -> ReplyForm:
    """The turn's moves for a person: propose (one option per issue), accept or reject a live offer, walk, none;
    each with the message (when the channel is open) and the private scratchpad."""
    notes: tuple[Field, ...] = (
        Field(path=("message",), label="Message", kind="text", optional=True, hint="shown to every party"),
    ) if config.messages else ()
    notes += (Field(path=("scratchpad",), label="Scratchpad", kind="text", optional=True,
                    hint="private: never shown to another party"),)
    deal = tuple(Field(path=("deal", i.name), label=i.name, kind="choice", options=tuple(i.options))
                 for i in config.issues)
    moves = [Move(label="propose", reply={"action": "propose"}, fields=(*deal, *notes))]
    live = tuple(o.offer_id for o in state.offers)
    if live:
        offer = Field(path=("offer_id",), label="Offer", kind="choice", options=live)
        moves += [Move(label=kind, reply={"action": kind}, fields=(offer, *notes)) for kind in ("accept", "reject")]
    moves += [Move(label=kind, reply={"action": kind}, fields=notes) for kind in ("walk", "none")]
    return ReplyForm(moves=tuple(moves))


def reply_schema(config: ScorableConfig) -> dict[str, Any]:  # free-form: a JSON Schema, sent to the provider as is
    """The reply format (every action, any option) as ``texts`` shows it; a request carries ``legal_schema``,
    its narrowing to the moves legal in that state."""
    return {
        "type": "object",
        "properties": {
            "scratchpad": {"type": "string"},
            "message": {"type": "string"},
            "action": {"type": "string", "enum": list(engine.KINDS)},
            "deal": {
                "type": "object",
                "properties": {i.name: {"type": "string", "enum": list(i.options)} for i in config.issues},
                "required": [i.name for i in config.issues],
                "additionalProperties": False,
            },
            "offer_id": {"type": "string"},
        },
        "required": ["action"],
        "additionalProperties": False,
    }


MAX_DEALS_LISTED = 1000
"""Deals a legal-move schema lists one by one (ours); a larger table names each issue's options and leaves out the
live packages with ``not``, which some decoders do not honour (the engine then asks again)."""


def legal_schema(config: ScorableConfig, state: State, role: str) -> Schema:
    """The replies legal for ``role`` now, as a JSON schema: propose a package that is not live already; accept
    or reject a live offer by its id (only when there is one); walk; none. The scratchpad and the message within
    ``TEXT_CHARS`` (ours: no rule bounds them)."""
    talk = {"scratchpad": bounded_text(), "message": bounded_text()}
    deal = _new_deal(config, state)
    branches = [] if deal is None else [reply_object(talk | {"action": {"const": "propose"}, "deal": deal})]
    if state.offers:
        branches.append(reply_object(talk | {"action": {"enum": ["accept", "reject"]},
                                      "offer_id": {"enum": [o.offer_id for o in state.offers]}}))
    branches.append(reply_object(talk | {"action": {"enum": ["walk", "none"]}}))
    return one_of(branches)


def _new_deal(config: ScorableConfig, state: State) -> Schema | None:
    """A deal no live offer holds already; None when every deal is live."""
    live = [o.deal for o in state.offers]
    if prod(len(i.options) for i in config.issues) <= MAX_DEALS_LISTED:
        names = [i.name for i in config.issues]
        deals = (dict(zip(names, pick, strict=True)) for pick in product(*(i.options for i in config.issues)))
        fresh = [reply_object({name: {"const": option} for name, option in d.items()}) for d in deals if d not in live]
        return one_of(fresh) if fresh else None
    return reply_object({i.name: {"enum": list(i.options)} for i in config.issues}) | ({"not": {"enum": live}} if live else {})


def schemas(config: ScorableConfig) -> dict[str, Schema]:
    """The legal-move schema at each representative state (``texts``'s), by state."""
    return {name: legal_schema(config, state, in_play(engine.to_move(config, state)))
            for name, state in _sample(config).items()}


RULES: dict[str, str] = {
    "not_one_json_object": "Your reply must be EXACTLY ONE fenced JSON object (```json ... ```) and nothing outside it.",
    "unknown_key": 'Unknown key "{key}": the keys are {keys:quoted}.',
    "not_a_string": '"{key}" must be a string.',
    "unknown_action": 'Unknown action {action!j}: "action" must be one of {kinds:quoted}.',
    "deal_without_propose": '"deal" goes only with "propose"; leave it out for "{action}".',
    "offer_id_without_vote": '"offer_id" goes only with "accept" or "reject"; leave it out for "{action}".',
    "missing_offer_id": '"{action}" MUST name a live offer id: give "offer_id", for example "P1".',
    "unknown_offer/none_live": "There is no live offer yet: nothing can be accepted or rejected.",
    "unknown_offer": '"{offer_id}" is not a live offer; the live offers are {live:list}.',
    "duplicate_offer": "That package is already live as {offer_id}: accept {offer_id} instead of tabling it again.",
    "missing_deal": '"propose" needs "deal": an object choosing one option for every issue ({issues:list}).',
    "unknown_issue": 'Unknown issue "{issue}": the issues are {issues:list}.',
    "missing_issue": 'The deal must choose an option for every issue; "{issue}" is missing.',
    "unknown_option": "Unknown option {option!j} for {issue}: the options are {options:list}.",
}
"""Rule code -> the sentence the model reads, beside the kit's shared ones (ours; ``kit.wording`` templates)."""


def rule_sentence(config: ScorableConfig, error: RuleError) -> str:
    return wording.rule_sentence(RULES, error, kinds=engine.KINDS)


def repair_message(config: ScorableConfig, state: State, role: str, error: RuleError) -> str:
    return wording.repair(
        str(error), recorded=wording.NOTHING_RECORDED.format(step="turn"),
        again="Reply again with EXACTLY ONE fenced JSON object and nothing outside it.",
    )


def _sample(config: ScorableConfig) -> dict[str, State]:
    """Representative states: the opening, an offer with votes of every kind, a walk, the last round."""
    state = engine.start(config, 0, None)
    deal = {i.name: i.options[0] for i in config.issues}
    moves = [Action(kind="propose", deal=deal, message="<message>"), Action(kind="accept", offer_id="P1"),
             Action(kind="reject", offer_id="P1", message="<message>"), Action(kind="walk")]
    samples = {"opening": state}
    for move in moves:
        role = engine.to_move(config, state)
        if state.ended is not None or (move.kind == "walk" and (role in config.veto or len(config.roles) < 4)):
            break
        state = engine.apply(config, state, in_play(role), move)
    if state.ended is None:
        samples["offers_and_votes"] = state
    while state.ended is None and state.round < config.rounds:
        state = engine.apply(config, state, in_play(engine.to_move(config, state)), Action(kind="none"))
    if state.ended is None:
        samples["last_round"] = state
    return samples


PRIVATE_SENTENCE = ours("seed 003 shows public score sheets only: the private-information sentence is ours")
TURN_MESSAGE = ours("seed 003 shows no per-turn message: ours, in the style of seed 000's public record")


def texts(config: ScorableConfig) -> dict[str, Text]:
    """Every text a model can read under ``config``, rendered from representative states, with its provenance."""
    samples = _sample(config)
    why = f"table {config.name}'s wording is this project's (its config's source: {config.source})"
    out = {}
    for role in config.roles:
        text = system(config, role)
        frame = mixed(framed(config.source, text, why), *([] if config.public_score_sheets else [PRIVATE_SENTENCE]),
                      *([] if config.messages else [SILENT]))
        out[f"brief:{role}"] = Text(text=text, provenance=frame)
    out["sentence:information"] = Text(
        text=PUBLIC_INFORMATION if config.public_score_sheets else PRIVATE_INFORMATION,
        provenance=seed("003", PUBLIC_INFORMATION) if config.public_score_sheets else PRIVATE_SENTENCE)
    turn = TURN_MESSAGE if config.messages else mixed(TURN_MESSAGE, SILENT)
    for name, state in samples.items():
        mover = in_play(engine.to_move(config, state))
        out[f"turn:{name}"] = Text(text=user(config, state, mover), provenance=turn)
    out["reply_schema"] = Text(text=json.dumps(reply_schema(config), sort_keys=True), provenance=SCHEMA)
    error = RuleError("<rule>")
    error.sentence = "<rule sentence>"
    start = samples["opening"]
    mover = in_play(engine.to_move(config, start))
    out["repair"] = Text(text=repair_message(config, start, mover, error), provenance=REPAIR)
    return out | wording.rule_texts(RULES)
