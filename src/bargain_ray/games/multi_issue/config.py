"""The config of a two-party multi-issue alternating-offers game.

Both the brief's scoring text and the engine's scoring are computed from
these fields, so the two cannot disagree.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from bargain_ray.games.kit.turns import MAX_TURNS
from bargain_ray.games.kit.turns import exact as exact  # re-exported: metrics and the frontier read it here


class Term(BaseModel):
    """One negotiated term and its normalised level ``symbol = (name - offset) / scale``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    description: str
    min: float
    max: float
    note: str | None = None
    symbol: str
    offset: float = 0
    scale: float
    levels: float


class Stake(BaseModel):
    """How much one role cares about one term and which end it prefers."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    weight: float
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
    name: str
    situation: str
    terms: tuple[Term, ...]
    roles: dict[str, Role]
    share_role: str
    max_turns: int = Field(12, ge=1, le=MAX_TURNS)
    max_repairs: int = Field(2, ge=0)
    max_message_words: int = Field(80, ge=1)
    decimals: int = Field(2, ge=0)
    source: str = "ours"
    """Where the briefs' and turn messages' wording comes from: a seed ("seed 000") or "ours"."""

    @model_validator(mode="after")
    def _check(self) -> MultiIssueConfig:
        if len(self.roles) != 2:
            raise ValueError("a multi_issue game has exactly two roles")
        names = {t.name for t in self.terms}
        for key, role in self.roles.items():
            if set(role.stakes) != names:
                raise ValueError(f"role {key!r} must give a stake for every term {sorted(names)}")
        if self.share_role not in self.roles:
            raise ValueError(f"share_role {self.share_role!r} is not a role")
        for t in self.terms:
            if not t.min < t.max:
                raise ValueError(f"term {t.name!r}: min must be below max")
        return self
