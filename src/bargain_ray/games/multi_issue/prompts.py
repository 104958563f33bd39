"""The wording of the multi-issue game: briefs, the per-turn message, rule sentences, repairs.

Everything a model reads is rendered here from the config and from one role's
view; no other module writes prompt text. The briefs and the per-turn message
are seed 000's frame (its scenario renders byte for byte); the own-offer and
final-reply turn lines, the rule sentences and the repair message are ours.
"""

from __future__ import annotations

import json
from decimal import Decimal

from bargain_ray.core.form import Field, Move, ReplyForm
from bargain_ray.core.prompt import Message, Prompt
from bargain_ray.games.base import RuleError
from bargain_ray.games.kit import wording
from bargain_ray.games.kit.schema import NULL, Schema, on_grid, one_of, reply_object, words_at_most
from bargain_ray.games.kit.turns import in_play
from bargain_ray.games.kit.wording import REPAIR, SCHEMA, SILENT, Text, framed, num
from bargain_ray.games.multi_issue import engine
from bargain_ray.games.multi_issue.config import MultiIssueConfig, Term
from bargain_ray.games.multi_issue.engine import Action, State
from bargain_ray.games.provenance import mixed, ours

_COUNT = {1: "ONE", 2: "TWO", 3: "THREE", 4: "FOUR", 5: "FIVE", 6: "SIX", 7: "SEVEN", 8: "EIGHT"}


def fixed(config: MultiIssueConfig, x: float | Decimal) -> str:
    return f"{Decimal(str(x)):.{config.decimals}f}"


def brief(config: MultiIssueConfig, role: str) -> str:
    """The role's private brief, the system prompt of every call it makes."""
    r = config.roles[role]
    return "\n\n".join(
        [
            f"You negotiate for {r.org}, the {r.label}: {r.description}. "
            "This brief is private: the other side cannot see it.",
            config.situation,
            _terms_text(config),
            _scoring_text(config, role),
            _rules_text(config),
        ]
    )


def _terms_text(config: MultiIssueConfig) -> str:
    count = _COUNT.get(len(config.terms), str(len(config.terms)))
    lines = [f"There are {count} negotiated terms:"]
    for t in config.terms:
        note = f" {t.note}" if t.note else ""
        lines.append(
            f"- {t.name}: {t.description}, any value from {fixed(config, t.min)} to {fixed(config, t.max)}{note}."
        )
    return "\n".join(lines)


def _level_text(t: Term) -> str:
    inner = f"({t.name} - {num(t.offset)})" if t.offset else t.name
    return f"{t.symbol} = {inner} / {num(t.scale)}"


def _scoring_text(config: MultiIssueConfig, role: str) -> str:
    r = config.roles[role]
    parts = []
    for t in config.terms:
        stake = r.stakes[t.name]
        share = f"{t.symbol}/{num(t.levels)}"
        parts.append(f"{num(stake.weight)} x ({'1 - ' if stake.prefers == 'low' else ''}{share})")
    return (
        "How your organization scores an agreement: it uses internal planning points. "
        "They are a planning score only, not dollars, money or a real transaction. "
        f"For any agreement, points = {' + '.join(parts)}, where "
        f"{', '.join(_level_text(t) for t in config.terms)}. "
        "Higher points are better for your organization. "
        f"If there is no agreement, your organization gets {num(r.no_agreement)} points."
    )


def _rules_text(config: MultiIssueConfig) -> str:
    n = config.max_turns
    shape = ", ".join(f'"{t.name}": <number>' for t in config.terms)
    return "\n".join(
        [
            "Rules:",
            f"- There are at most {n} turns, alternating between the two sides.",
            "- On your turn reply with exactly one JSON object and nothing else: "
            '{"action": "OFFER" or "ACCEPT" or "NONE", "offer_id": null or "<offer ID>", '
            f'"terms": null or {{{shape}}}, "message": "<text for the other side>"}}.',
            '- OFFER: "terms" gives every negotiated term listed above as a number inside its range '
            f'with at most {_words(config.decimals)} decimal places, and "offer_id" is null. '
            "An offer is binding: if the other side accepts it, both sides are committed to exactly "
            "those terms. A new offer replaces any earlier standing offer.",
            '- ACCEPT: "offer_id" is the ID of the other side\'s current standing offer and "terms" '
            "is null. This creates a binding agreement on exactly that offer. You cannot accept your own offer.",
            '- NONE: no offer and no acceptance this turn; "offer_id" and "terms" are null.',
            '- Words in "message" never make, change or accept a deal; only the action does. '
            f'"message" is at most {config.max_message_words} words and '
            + ("is shown to the other side." if config.messages
               else "is never shown to the other side: this game has no message channel."),
            f"- If turn {n} is a new offer, the other side gets one final reply that can only ACCEPT "
            f"that offer or END without a deal. Otherwise, if no offer has been accepted by the end of "
            f"turn {n}, there is no deal and each side gets its no-agreement points.",
        ]
    )


def _words(n: int) -> str:
    return _COUNT.get(n, str(n)).lower()


def terms_text(config: MultiIssueConfig, terms: dict[str, Decimal]) -> str:
    return ", ".join(f"{t.name} {fixed(config, terms[t.name])}" for t in config.terms)


def _record_text(config: MultiIssueConfig, state: State) -> str:
    if not state.record:
        return "(nothing yet)"
    lines = []
    for e in state.record:
        label = config.roles[e.role].label
        lines.append(f'Turn {e.turn}, {label}: "{e.action.message}"' if config.messages else f"Turn {e.turn}, {label}:")
        a = e.action
        if a.kind == "OFFER":
            lines.append(f" Action: OFFER {e.offer_id} ({terms_text(config, a.terms or {})})")
        elif a.kind == "ACCEPT":
            lines.append(f" Action: ACCEPT {e.offer_id}")
        else:
            lines.append(f" Action: {a.kind}")
    return "\n".join(lines)


def _standing_text(config: MultiIssueConfig, state: State, role: str) -> str:
    s = state.standing
    if s is None:
        return "Standing offer: none."
    head = f"Standing offer: {s.offer_id}, made by {config.roles[s.proposer].label}: {terms_text(config, s.terms)}."
    if s.proposer == role:
        return f"{head} It is your own offer, so you cannot accept it."
    return f"{head} You may accept it by naming {s.offer_id}."


def _turn_text(config: MultiIssueConfig, state: State, role: str) -> str:
    r = config.roles[role]
    n = engine.turn_number(state)
    if engine.in_final_reply(config, state):
        offer = state.standing.offer_id if state.standing else "none"
        return (
            f"This is the final reply after turn {config.max_turns}. You speak for {r.org} as \"{r.label}\". "
            f"You can only ACCEPT {offer} (action \"ACCEPT\", offer_id \"{offer}\") or END without a deal "
            '(action "END", offer_id null, terms null).\nReply with the JSON object only.'
        )
    left = config.max_turns - n
    remain = f"{left} turn remains" if left == 1 else f"{left} turns remain"
    return (
        f"This is turn {n} of {config.max_turns}. You speak for {r.org} as \"{r.label}\". "
        f"After this turn, {remain}.\nReply with the JSON object only."
    )


def _branch(action: str, offer_id: dict, terms: dict) -> dict:
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["action", "offer_id", "terms", "message"],
        "properties": {"action": {"const": action}, "offer_id": offer_id, "terms": terms, "message": {"type": "string"}},
    }


def reply_schema(config: MultiIssueConfig, final: bool) -> dict:
    """The reply format as a JSON schema, one branch per action a turn (or the final reply) may name: the format
    ``texts`` shows; a request carries ``legal_schema``, its narrowing to the moves legal in that state."""
    null = {"type": "null"}
    terms = {
        "type": "object",
        "additionalProperties": False,
        "required": [t.name for t in config.terms],
        "properties": {t.name: {"type": "number", "minimum": t.min, "maximum": t.max} for t in config.terms},
    }
    accept = _branch("ACCEPT", {"type": "string"}, null)
    if final:
        return {"anyOf": [accept, _branch("END", null, null)]}
    return {"anyOf": [_branch("OFFER", null, terms), accept, _branch("NONE", null, null)]}


def legal_schema(config: MultiIssueConfig, state: State, role: str) -> Schema:
    """The replies legal for ``role`` now, as a JSON schema: OFFER with every term on its grid (not in the final
    reply), ACCEPT naming the other side's standing offer (only when there is one), NONE (not in the final
    reply), END (only in it); a message within the word limit."""
    message = words_at_most(config.max_message_words)
    terms = reply_object({t.name: on_grid(t.min, t.max, config.decimals) for t in config.terms})

    def branch(action: str, offer_id: Schema, offered: Schema) -> Schema:
        return reply_object({"action": {"const": action}, "offer_id": offer_id, "terms": offered, "message": message})

    standing = state.standing
    final = engine.in_final_reply(config, state)
    branches = [] if final else [branch("OFFER", NULL, terms)]
    if standing is not None and standing.proposer != role:
        branches.append(branch("ACCEPT", {"const": standing.offer_id}, NULL))
    branches.append(branch("END" if final else "NONE", NULL, NULL))
    return one_of(branches)


def schemas(config: MultiIssueConfig) -> dict[str, Schema]:
    """The legal-move schema at each representative state (``texts``'s), by state."""
    return {name: legal_schema(config, state, in_play(engine.to_move(config, state)))
            for name, state in _sample(config).items()}


def prompt(config: MultiIssueConfig, state: State, role: str) -> Prompt:
    """One fresh request carrying the whole public record (seed 000's format)."""
    user = (
        f"Public situation: {config.situation}\n\n"
        f"Public record so far:\n{_record_text(config, state)}\n\n"
        f"{_standing_text(config, state, role)}\n"
        f"{_turn_text(config, state, role)}"
    )
    return Prompt(
        system=brief(config, role),
        messages=(Message(role="user", content=user),),
        json_schema=legal_schema(config, state, role),
        form=form(config, state, role),
    )


def form(config: MultiIssueConfig, state: State, role: str) -> ReplyForm:
    """The turn's moves for a person: OFFER with one field per term in its range, ACCEPT of the other side's
    standing offer, NONE (or, in the final reply, ACCEPT and END), each with its message."""
    shown = "shown to the other side" if config.messages else "never shown: this game has no message channel"
    message = Field(path=("message",), label="Message", kind="text", hint=shown,
                    max_words=config.max_message_words, optional=True)
    blank: dict = {"action": None, "offer_id": None, "terms": None, "message": ""}
    s = state.standing
    moves = []
    if s is not None and s.proposer != role:
        moves.append(Move(label=f"ACCEPT {s.offer_id}", reply=blank | {"action": "ACCEPT", "offer_id": s.offer_id},
                          fields=(message,)))
    if engine.in_final_reply(config, state):
        return ReplyForm(moves=(*moves, Move(label="END", reply=blank | {"action": "END"}, fields=(message,))))
    terms = tuple(Field(path=("terms", t.name), label=t.name, kind="number", hint=t.description, minimum=t.min,
                        maximum=t.max, decimals=config.decimals) for t in config.terms)
    offer = Move(label="OFFER", reply=blank | {"action": "OFFER"}, fields=(*terms, message))
    return ReplyForm(moves=(offer, *moves, Move(label="NONE", reply=blank | {"action": "NONE"}, fields=(message,))))


RULES: dict[str, str] = {
    "final_reply": 'This is the final reply: the only actions are ACCEPT {offer_id} or END; got "{action}".',
    "unknown_action": 'Unknown action {action!r}: use "OFFER", "ACCEPT" or "NONE".',
    "unknown_action/end": 'Unknown action "END": use "OFFER", "ACCEPT" or "NONE".',
    "accept_without_offer": "There is no standing offer to accept.",
    "accept_own_offer": "{offer_id} is your own offer: you cannot accept your own offer.",
    "accept_stale_offer": "ACCEPT must name the other side's current standing offer, {standing}; {offer_id} is not it.",
    "message_type": '"message" must be a string.',
    "message_too_long": '"message" has {words} words; it must be at most {max_message_words} words.',
    "offer_id_on_offer": 'For OFFER, "offer_id" must be null.',
    "terms_without_offer": 'For {action}, "terms" must be null.',
    "accept_without_id": 'For ACCEPT, "offer_id" must name the offer you accept.',
    "offer_id_without_accept": 'For {action}, "offer_id" must be null.',
    "terms_missing": 'For OFFER, "terms" must give every term: {terms:list}.',
    "unknown_term": "Unknown term {term!r}: the terms are {terms:list}.",
    "missing_term": "The offer is missing the term {term!r}.",
    "term_not_number": "{term} must be a number.",
    "too_many_decimals": "{term} is {value}: use at most {decimals_word} decimal places.",
    "term_out_of_range": "{term} is {value}: it must be from {low:.{decimals}f} to {high:.{decimals}f}.",
}
"""Rule code -> the sentence the model reads, beside the kit's shared ones (``kit.wording`` templates; the config fills the rest)."""


def rule_sentence(config: MultiIssueConfig, error: RuleError) -> str:
    return wording.rule_sentence(
        RULES, error, decimals=config.decimals, decimals_word=_words(config.decimals),
        max_message_words=config.max_message_words,
    )


def repair_message(config: MultiIssueConfig, state: State, role: str, error: RuleError) -> str:
    n = engine.turn_number(state)
    return wording.repair(
        str(error), recorded=wording.NOTHING_RECORDED.format(step="turn"),
        again=wording.REPLY_AGAIN.format(when=f" for turn {n}"),
    )


def _sample(config: MultiIssueConfig) -> dict[str, State]:
    """Representative states: the opening, an offer standing, one's own offer standing, the final reply."""
    offer = Action(kind="OFFER", terms={t.name: Decimal(str(t.min)) for t in config.terms}, message="<message>")
    none = Action(kind="NONE", message="<message>")

    def after(actions: list[Action]) -> State:
        state = engine.start(config, 0, None)
        for action in actions:
            state = engine.apply(config, state, in_play(engine.to_move(config, state)), action)
        return state

    samples = {"opening": after([]), "offer_standing": after([offer])}
    if config.max_turns >= 3:
        samples["own_offer_standing"] = after([offer, none])
    samples["final_reply"] = after([none] * (config.max_turns - 1) + [offer])
    return samples


OWN_TURN_LINE = ours("seed 000 shows the messages of turns 1 and 2 only: this turn's lines are ours, in its frame")


def texts(config: MultiIssueConfig) -> dict[str, Text]:
    """Every text a model can read under ``config``, rendered from representative states, with its provenance."""
    samples = _sample(config)
    start = samples["opening"]
    why = f"scenario {config.name}'s wording is this project's (its config's source: {config.source})"
    talk = [] if config.messages else [SILENT]
    out = {f"brief:{role}": Text(text=(text := brief(config, role)),
                                 provenance=mixed(framed(config.source, text, why), *talk)) for role in config.roles}
    for name, state in samples.items():
        role = in_play(engine.to_move(config, state))
        user = prompt(config, state, role).messages[-1].content
        shown = name in ("opening", "offer_standing")  # the two turns seed 000 shows
        frame = mixed(framed(config.source, user, why), *talk) if shown else mixed(OWN_TURN_LINE, *talk)
        out[f"turn:{name}"] = Text(text=user, provenance=frame)
    for final in (False, True):
        out[f"reply_schema:{'final' if final else 'turn'}"] = Text(
            text=json.dumps(reply_schema(config, final), sort_keys=True), provenance=SCHEMA)
    error = RuleError("<rule>")
    error.sentence = "<rule sentence>"
    mover = in_play(engine.to_move(config, start))
    out["repair"] = Text(text=repair_message(config, start, mover, error), provenance=REPAIR)
    return out | wording.rule_texts(RULES)
