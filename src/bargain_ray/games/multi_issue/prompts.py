"""The wording of the multi-issue game: briefs, the per-turn message, repairs.

Everything a model reads is rendered here from the config and from one role's
view; no other module writes prompt text.
"""

from __future__ import annotations

from decimal import Decimal

from bargain_ray.core.prompt import Message, Prompt
from bargain_ray.games.base import RuleError
from bargain_ray.games.multi_issue import engine
from bargain_ray.games.multi_issue.config import MultiIssueConfig, Term
from bargain_ray.games.multi_issue.engine import State

_COUNT = {1: "ONE", 2: "TWO", 3: "THREE", 4: "FOUR", 5: "FIVE", 6: "SIX", 7: "SEVEN", 8: "EIGHT"}


def num(x: float | Decimal) -> str:
    """A config number as the brief writes it: 50, 0.5, never 50.0."""
    d = Decimal(str(x)).normalize()
    return f"{d:f}"


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
            f'"message" is at most {config.max_message_words} words and is shown to the other side.',
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
        lines.append(f'Turn {e.turn}, {label}: "{e.action.message}"')
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
    """The reply format as a JSON schema, one branch per action, for providers that constrain output."""
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
        json_schema=reply_schema(config, engine.in_final_reply(config, state)),
    )


def repair_message(config: MultiIssueConfig, state: State, role: str, error: RuleError) -> str:
    n = engine.turn_number(state)
    return (
        f"Your reply was not accepted: {error} "
        f"Nothing was recorded for this turn. Reply again for turn {n} with exactly one JSON object "
        "and nothing else."
    )
