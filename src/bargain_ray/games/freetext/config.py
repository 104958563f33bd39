"""The config of a free-text negotiation judged by an observer (seed 004).

A scenario names its object, each party's private situation and the words the
observer's instructions use for the two parts; ``prompts`` renders every text
from these fields, so the orange and the battery pack share one form.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from bargain_ray.games.kit.turns import MAX_TURNS


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Party(Strict):
    """A negotiator: how the observer's transcript names it and its private need."""

    label: str
    situation: str


class Observer(Strict):
    """The silent referee: its role name and the scenario words of its instructions."""

    role: str = "observer"
    parts: tuple[str, str]
    whole: str
    example: str


class FreeTextConfig(Strict):
    """A whole scenario; the parties' order is the speaking order (Party A first)."""

    family: Literal["freetext"] = "freetext"
    name: str
    object: str
    parties: dict[str, Party]
    observer: Observer
    max_turns: int = Field(12, ge=1, le=MAX_TURNS)
    max_repairs: int = Field(2, ge=0)
    source: str = "ours"
    """Where the briefs' and the observer's wording comes from: "seed 004" or "ours"."""
    min_sentences: int = Field(2, ge=1)
    max_sentences: int = 4
    """The brief asks for min to max sentences; the engine measures it, never enforces it."""
    max_words: int | None = Field(None, ge=1)
    """A hard limit against runaway output (a message over it is repaired); None: off."""

    @model_validator(mode="after")
    def _check(self) -> FreeTextConfig:
        if len(self.parties) != 2:
            raise ValueError("a freetext game has exactly two parties")
        if self.observer.role in self.parties:
            raise ValueError(f"observer role {self.observer.role!r} is also a party")
        if not 1 <= self.min_sentences <= self.max_sentences:
            raise ValueError("need 1 <= min_sentences <= max_sentences")
        return self

    @property
    def roles(self) -> tuple[str, ...]:
        return (*self.parties, self.observer.role)
