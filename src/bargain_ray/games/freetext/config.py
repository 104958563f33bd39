"""The config of a free-text negotiation judged by an observer (seed 004).

A scenario names its object, each party's private situation and the words the
observer's instructions use for the two parts; ``prompts`` renders every text
from these fields, so the orange and the battery pack share one form.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from bargain_ray.games.kit.turns import MAX_TURNS
from bargain_ray.games.provenance import Scenario, Setting, mixed, ours, seed


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
    name: Annotated[str, Setting(ours("the game config's name: a label no model reads"))]
    object: Annotated[str, Scenario("the one object both parties claim", lambda c: f"a single {c.object}")]
    parties: Annotated[dict[str, Party], Scenario("each party's label and private situation",
                                                  lambda c: next(iter(c.parties.values())).situation)]
    observer: Annotated[Observer, Scenario("the observer's role name and the scenario words of its instructions",
                                           lambda c: " ".join(c.observer.example.split()))]
    max_turns: Annotated[int, Setting(mixed(seed("004", "until they agree or run out of turns"),
                                            ours("seed 004 gives no number of turns: 12 is ours"))), Field(ge=1, le=MAX_TURNS)] = 12
    max_repairs: Annotated[int, Setting(ours("seed 004 gives no repair limit: 2 a turn, as seed 002's, is ours")),
                           Field(ge=0)] = 2
    source: Annotated[str, Setting(ours("where the briefs' and the observer's wording comes from: a label no model "
                                        "reads"))] = "ours"
    """Where the briefs' and the observer's wording comes from: "seed 004" or "ours"."""
    min_sentences: Annotated[int, Setting(seed("004", "2 to 4 sentences, plain conversational text")), Field(ge=1)] = 2
    max_sentences: Annotated[int, Setting(seed("004", "2 to 4 sentences, plain conversational text"))] = 4
    """The brief asks for min to max sentences; the engine measures it, never enforces it."""
    max_words: Annotated[int | None, Setting(ours("a guard against runaway output, off by default: seed 004 gives "
                                                  "no word limit")), Field(ge=1)] = None
    """A hard limit against runaway output (a message over it is repaired); None: off."""
    verdict_confidence_in_range: Annotated[bool, Setting(ours(
        "seed 004 asks for a confidence 'between 0 and 1', not what to do with another: true refuses it and asks "
        "the observer again (ours); false keeps the number as written"))] = True
    verdict_consistent: Annotated[bool, Setting(ours(
        "seed 004 does not say what a verdict of agreement with type none means: true refuses it (and the "
        "reverse) and asks the observer again (ours); false keeps it, agreement_reached deciding"))] = True

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
