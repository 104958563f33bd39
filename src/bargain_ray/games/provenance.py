"""Where each rule, setting, metric and text of a game comes from: a seed's own words, or ours and why.

Every item is declared next to itself with a ``Provenance``: a rule in its engine's ``PROTOCOL``, a
setting on its config field (``Annotated[..., Setting(...)]``), a metric in its metrics module's
``METRICS``, a text where ``texts()`` renders it. A seed is named only with the seed's own words
(``quote``, checked against the seed documents by the tests); anything else is ``ours`` with a
one-line ``reason``. ``analysis.provenance`` collects the declarations per family and per sweep.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator

SEEDS = ("000", "001", "002", "003", "004")
OURS = "ours"
"""The source of what this project chose or wrote (no seed gives it): never cite it as seed material."""
_PART = re.compile(r"seed (00[0-4])|ours")


class Provenance(BaseModel):
    """One item's source: ``seed NNN`` with the seed's words, ``ours`` with why, or both joined by `` + ``
    (a text with a seed's frame and a sentence of ours)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    source: str
    quote: str | None = None
    """The seed's own words the item follows (required with a seed; checked against the seed's text)."""
    reason: str | None = None
    """One line: why the item is ours (required with ``ours``)."""

    @model_validator(mode="after")
    def _check(self) -> Provenance:
        parts = self.source.split(" + ")
        if not parts or not all(_PART.fullmatch(p) for p in parts) or len(set(parts)) != len(parts):
            raise ValueError(f"source {self.source!r}: name seed 000 ... seed 004 or ours, joined by ' + '")
        if self.seeds and not (self.quote or "").strip():
            raise ValueError(f"source {self.source!r} names a seed: quote the seed's own words")
        if not self.seeds and self.quote:
            raise ValueError("a quote belongs to a seed: an item that is only ours gives a reason")
        if OURS in parts and not (self.reason or "").strip():
            raise ValueError(f"source {self.source!r} is ours: give a one-line reason")
        return self

    @property
    def seeds(self) -> tuple[str, ...]:
        """The seed numbers this item's words come from."""
        return tuple(m[1] for p in self.source.split(" + ") if (m := _PART.fullmatch(p)) and m[1])

    @property
    def ours(self) -> bool:
        return OURS in self.source.split(" + ")


def seed(number: str, quote: str) -> Provenance:
    """An item a seed gives, in the seed's own words, e.g. ``seed("002", "seller moves first")``."""
    return Provenance(source=f"seed {number}", quote=quote)


def ours(reason: str) -> Provenance:
    """An item this project chose or wrote, and why."""
    return Provenance(source=OURS, reason=reason)


def mixed(*parts: Provenance) -> Provenance:
    """The provenance of an item built from several sources (``seed 003 + ours``): every quote and reason kept."""
    sources = [s for p in parts for s in p.source.split(" + ")]
    quotes = [p.quote for p in parts if p.quote]
    reasons = [p.reason for p in parts if p.reason]
    return Provenance(source=" + ".join(dict.fromkeys(sources)), quote=" … ".join(quotes) or None,
                      reason="; ".join(reasons) or None)


def opening(text: str, limit: int = 160) -> str:
    """The first line of a text, cut after its first sentence when long: how a rendered text is quoted."""
    line = text.strip().split("\n", 1)[0]
    if len(line) > limit and ". " in line:
        line = line[: line.index(". ") + 1]
    return line


class Declared(BaseModel):
    """One named item of a family (a rule of its protocol) and where it comes from."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    what: str
    provenance: Provenance


class Text(BaseModel):
    """One text a model can read, rendered for a config, and where its wording comes from."""

    model_config = ConfigDict(frozen=True)

    text: str
    provenance: Provenance

    @property
    def source(self) -> str:
        """``seed NNN``, ``ours`` or a join of both (``seed 003 + ours``)."""
        return self.provenance.source


def rule(name: str, what: str, provenance: Provenance) -> Declared:
    """One rule of a family's protocol (or a rule code its engine raises), what it says, and its source."""
    return Declared(name=name, what=what, provenance=provenance)


class Metric(BaseModel):
    """One figure a family computes: what it means, and where its definition comes from."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    meaning: str
    provenance: Provenance


def metric(meaning: str, provenance: Provenance) -> Metric:
    """One figure: what it means, and where its definition comes from."""
    return Metric(meaning=meaning, provenance=provenance)


@dataclass(frozen=True)
class Setting:
    """Marks a config field as a setting and gives its default's provenance: ``Annotated[int, Setting(...)]``."""

    provenance: Provenance


@dataclass(frozen=True)
class Scenario:
    """Marks a config field as scenario data (a brief's facts): its provenance is the config's ``source``, quoted
    by the words of the game's texts that hold the field's data (``shows``, rendered from the config)."""

    what: str
    shows: Callable[[Any], str]
    """The config -> the words its texts render from this field (``lambda c: f"a single {c.object}"``): the quote
    of a config whose source is a seed, so the quote says what the field holds."""
