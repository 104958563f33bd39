"""Words every family shares, and the one way rule sentences are rendered from code and facts.

Engines raise ``RuleError(code, **facts)`` and never write a sentence; a family's
``prompts`` holds one table code -> template and renders the sentence with
``rule_sentence``. Templates are ``str.format`` text with two additions: the
conversion ``!j`` writes a value as JSON (``"none"``, ``7``, ``null``), and a
list field takes the spec ``list`` (``a, b, c``) or ``quoted`` (``"a", "b"``).
``placeholders`` renders any template with ``<field>`` in every slot (``<key!r>``,
``<keys:list>`` where it converts), which is how ``texts()`` shows a rule's
sentence without a case.
"""

from __future__ import annotations

import json
import string
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from bargain_ray.games.base import RuleError
from bargain_ray.games.provenance import OURS, Provenance, Text, mixed, opening, ours, seed


def framed(source: str, text: str, reason: str) -> Provenance:
    """The provenance of a text rendered from a config whose ``source`` names where its wording comes from:
    a seed's (quoted by the text's own opening, which the tests find in the seed) or ours (``reason``)."""
    parts = source.split(" + ")
    numbers = [p.removeprefix("seed ") for p in parts if p != OURS]
    given = [seed(n, opening(text)) for n in numbers]
    return mixed(*given, *([ours(reason)] if OURS in parts else []))


SILENT = ours("the no-communication condition (a control no seed runs): its sentences about the closed channel are ours")
"""Provenance of the words a game says of its message channel when a condition closes it (``messages: false``)."""
RULE_SENTENCE = ours("no seed words an answer to a broken rule: each rule's sentence is ours")
REPAIR = ours("no seed shows the message that answers an invalid reply: its wording is ours")
SCHEMA = ours("the reply schema sent to providers that constrain output is ours (the seeds send none)")


ONE_OBJECT = "Your reply must be exactly one JSON object and nothing else."
RULES: dict[str, str] = {
    "not_one_json_object": ONE_OBJECT,
    "unknown_key": "Unknown key {key!r}: the keys are {keys:list}.",
    "missing_key": "The JSON object must have the key {key!r}.",
}
"""The sentences of the rules ``kit.replies`` checks; a family's table may reword any of them."""

NOT_ACCEPTED = "Your {what} was not accepted: {error}"
NOTHING_RECORDED = "Nothing was recorded for this {step}."
REPLY_AGAIN = "Reply again{when} with exactly one JSON object and nothing else."


def repair(error: str, *, what: str = "reply", recorded: str | None = None, again: str | None = None) -> str:
    """The message answering an invalid reply (ours: no seed words it): what was wrong, what was kept, what to do.

    Families pass only what differs: ``recorded`` (None: nothing said about it) and ``again``.
    """
    head = NOT_ACCEPTED.format(what=what, error=error)
    return " ".join(part for part in (head, recorded, again or REPLY_AGAIN.format(when="")) if part)


def num(x: Decimal | float | int | str) -> str:
    """A number as a person writes it: 45, 45.5, 121.188, never 45.50, 82.0 or 4.55E+1."""
    return f"{Decimal(str(x)).normalize():f}"


class _Formatter(string.Formatter):
    def convert_field(self, value: Any, conversion: str | None) -> Any:
        if conversion == "j":
            return json.dumps(value)
        return super().convert_field(value, conversion)

    def format_field(self, value: Any, spec: str) -> str:
        if spec == "list":
            return ", ".join(str(v) for v in value)
        if spec == "quoted":
            return ", ".join(f'"{v}"' for v in value)
        return super().format_field(value, spec)


class _Slot:
    """A placeholder that renders as ``<name>`` whatever conversion or spec its field asks for."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"<{self.name}>"

    __str__ = __repr__


class _Placeholders(_Formatter):
    """Renders each field as ``<name!conversion:spec>``, so a change of conversion or spec shows too."""

    def get_value(self, key: int | str, args: Any, kwargs: Any) -> _Slot:
        return _Slot(str(key))

    def convert_field(self, value: Any, conversion: str | None) -> Any:
        return _Slot(f"{value.name}!{conversion}") if conversion else value

    def format_field(self, value: Any, spec: str) -> str:
        return f"<{value.name}:{spec}>" if spec else str(value)


_RENDER, _PLACEHOLDERS = _Formatter(), _Placeholders()


def render(template: str, facts: Mapping[str, Any]) -> str:
    """``template`` filled with ``facts``."""
    return _RENDER.vformat(template, (), facts)


def placeholders(template: str) -> str:
    """``template`` with ``<field>`` in every slot: the sentence's words, without a case."""
    return _PLACEHOLDERS.vformat(template, (), {})


def rule_table(rules: Mapping[str, str]) -> dict[str, str]:
    """A family's whole rule table: the kit's shared sentences, then the family's own (which may reword them)."""
    return {**RULES, **rules}


def rule_sentence(rules: Mapping[str, str], error: RuleError, **extra: Any) -> str:
    """The sentence the model reads for ``error``: its rule's template filled with its facts (and ``extra``)."""
    return render(rule_table(rules)[error.template], {**extra, **error.facts})


def rule_texts(rules: Mapping[str, str], provenance: Provenance = RULE_SENTENCE) -> dict[str, Text]:
    """Every rule sentence of a family, rendered from placeholder facts, named ``rule:<code>``."""
    table = rule_table(rules)
    return {f"rule:{code}": Text(text=placeholders(template), provenance=provenance)
            for code, template in table.items()}
