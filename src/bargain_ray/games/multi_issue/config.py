"""The config of a two-party multi-issue alternating-offers game.

Both the brief's scoring text and the engine's scoring are computed from
these fields, so the two cannot disagree.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from bargain_ray.games.kit.names import Identifier
from bargain_ray.games.kit.replies import MAX_DECIMALS, MAX_SIGNIFICANT, decimals_of, too_long
from bargain_ray.games.kit.turns import MAX_TURNS
from bargain_ray.games.kit.turns import exact as exact  # re-exported: metrics and the frontier read it here
from bargain_ray.games.provenance import Scenario, Setting, ours, seed


class Term(BaseModel):
    """One negotiated term and its normalised level ``symbol = (name - offset) / scale``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Identifier
    description: str
    min: float
    max: float
    note: str | None = None
    symbol: Identifier
    offset: float = 0
    scale: float = Field(gt=0)
    levels: float = Field(gt=0)


class Stake(BaseModel):
    """How much one role cares about one term and which end it prefers."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    weight: float = Field(ge=0, description="points between the term's worst and best end for this role; the end "
                                            "it prefers is ``prefers``")
    prefers: Literal["low", "high"]


class Role(BaseModel):
    """A party: who it speaks for, how it scores, what no agreement gives it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    label: str
    org: str
    description: str
    no_agreement: float
    stakes: dict[str, Stake]


class MultiIssueConfig(BaseModel):
    """A whole scenario; another scenario is only another YAML file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    family: Literal["multi_issue"] = "multi_issue"
    name: Annotated[str, Setting(ours("the game config's name: a label no model reads"))]
    situation: Annotated[str, Scenario("the public situation both briefs and every turn message open with",
                                       lambda c: c.situation)]
    terms: Annotated[tuple[Term, ...], Scenario("the negotiated terms, their ranges and levels",
                                                lambda c: f"{c.terms[0].name}: {c.terms[0].description}")]
    roles: Annotated[dict[str, Role], Scenario("each side: who it speaks for, its scoring, its no-agreement points",
                                               lambda c: "You negotiate for {0.org}, the {0.label}: {0.description}"
                                               .format(next(iter(c.roles.values()))))]
    share_role: Annotated[str, Setting(seed("001", '"buyer_share_of_joint_gain"'))]
    """The role whose share of the joint gain the outcome reports (seed 001's record gives the buyer's)."""
    max_turns: Annotated[int, Setting(seed("000", "There are at most 12 turns")), Field(ge=1, le=MAX_TURNS)] = 12
    max_repairs: Annotated[int, Setting(ours("seeds 000 and 001 give no repair limit: 2 a turn, as seed 002's, is "
                                             "ours")), Field(ge=0)] = 2
    max_message_words: Annotated[int, Setting(seed("000", '"message" is at most 80 words')), Field(ge=1)] = 80
    decimals: Annotated[int, Setting(seed("000", "two decimal places at most")), Field(ge=0, le=MAX_DECIMALS)] = 2
    messages: Annotated[bool, Setting(seed("000", '"message" is at most 80 words and is shown to the other side.'))] = (
        True)
    """False closes the message channel (the no-communication condition, ours): a reply's message is read as
    before but never shown to the other side, and the brief says so; every other word is the same."""
    source: Annotated[str, Setting(ours("where the scenario's wording comes from: a label no model reads"))] = "ours"
    """Where the briefs' and turn messages' wording comes from: a seed ("seed 000") or "ours"."""

    @model_validator(mode="after")
    def _check(self) -> MultiIssueConfig:
        if len(self.roles) != 2:
            raise ValueError("a multi_issue game has exactly two roles")
        names = {t.name for t in self.terms}
        for label, seen in (("name", [t.name for t in self.terms]), ("symbol", [t.symbol for t in self.terms])):
            if len(set(seen)) != len(seen):
                raise ValueError(f"two terms have the {label} {next(x for x in seen if seen.count(x) > 1)!r}: "
                                 f"give each term its own {label}")
        for key, role in self.roles.items():
            if set(role.stakes) != names:
                raise ValueError(f"role {key!r} must give a stake for every term {sorted(names)}")
            if not any(s.weight for s in role.stakes.values()):
                raise ValueError(f"role {key!r} gives every term weight 0, so no deal is better or worse for it than "
                                 "another: give at least one term a weight above 0")
        if self.share_role not in self.roles:
            raise ValueError(f"share_role {self.share_role!r} is not a role")
        for t in self.terms:
            self._check_range(t)
        return self

    def _check_range(self, t: Term) -> None:
        """A range the replies can name: min below max, both on the ``decimals`` grid (the ends an offer may take),
        within ``MAX_SIGNIFICANT`` digits."""
        if not t.min < t.max:
            raise ValueError(f"term {t.name!r}: min {t.min:g} must be below max {t.max:g}")
        for end in ("min", "max"):
            value = Decimal(str(getattr(t, end)))
            if decimals_of(value) > self.decimals:
                raise ValueError(f"term {t.name!r}: {end} {value} has more decimal places than decimals: "
                                 f"{self.decimals} lets an offer write; round it or raise decimals")
            if too_long(value, self.decimals):
                raise ValueError(f"term {t.name!r}: {end} {value} with decimals: {self.decimals} needs more than "
                                 f"{MAX_SIGNIFICANT} significant digits (ours: what a table stores exactly); "
                                 "use a larger unit or fewer decimals")
