"""The config of a multi-party scorable negotiation (seed 003).

The prompts print the score sheets and thresholds from these fields and the
engine and metrics score from the same fields, so the two cannot disagree.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from bargain_ray.games.kit.names import Listed
from bargain_ray.games.kit.turns import MAX_TURNS, exact
from bargain_ray.games.kit.wording import num
from bargain_ray.games.provenance import Scenario, Setting, ours, seed


class Issue(BaseModel):
    """One issue and its options; a deal picks exactly one option per issue."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Listed
    options: tuple[Listed, ...] = Field(min_length=1)


class Party(BaseModel):
    """One seat: its score sheet (issue -> option -> points) and its private threshold."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    threshold: float
    scores: dict[str, dict[str, float]]


class ScorableConfig(BaseModel):
    """A whole game; another table is only another YAML file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    family: Literal["scorable"] = "scorable"
    name: Annotated[str, Setting(ours("the game config's name: a label no model reads"))]
    parties: Annotated[dict[Listed, Party], Scenario("the seats in rotation order, each score sheet and threshold",
                                                  lambda c: "{} (threshold {}):".format(*next(
                                                      (p, num(x.threshold)) for p, x in c.parties.items()))),
                       Field(description="seat name -> party, in the order of the rotation")]
    issues: Annotated[tuple[Issue, ...], Scenario("the issues and their options",
                                                  lambda c: f"- {c.issues[0].name}: {', '.join(c.issues[0].options)}"),
                      Field(min_length=1)]
    veto: Annotated[tuple[str, ...], Scenario("the veto parties",
                                              lambda c: f"{c.veto[0]} (veto party" if c.veto else "")] = ()
    rounds: Annotated[int, Setting(seed("003", "There are 4 rounds of turns in total.")), Field(ge=1, le=MAX_TURNS)] = 4
    public_score_sheets: Annotated[bool, Setting(seed("003", "every party's score sheet is common knowledge"))] = True
    messages: Annotated[bool, Setting(seed("003", "if the message channel is open"))] = True
    """False closes the message channel (the no-communication condition): a reply's message is read as before but
    never shown to any party, and the reply format says so; seed 003 speaks of the channel being open."""
    max_repairs: Annotated[int, Setting(ours("seed 003 gives no repair limit: 2 a turn, as seed 002's, is ours")),
                           Field(ge=0)] = 2
    max_enumerated_deals: Annotated[int, Setting(ours("a bound on the metrics' enumeration of the deal space")),
                                    Field(ge=1, description="larger deal spaces are not enumerated for metrics")] = (
        100_000)
    source: Annotated[str, Setting(ours("where the table and its wording come from: a label no model reads")),
                      Field(description='where the table and its wording come from: "seed 003" or "ours"')] = "ours"

    @model_validator(mode="after")
    def _check(self) -> ScorableConfig:
        if len(self.parties) < 2:
            raise ValueError("a scorable game needs at least two parties")
        if self.rounds * len(self.parties) > MAX_TURNS:
            raise ValueError(f"rounds={self.rounds} of {len(self.parties)} parties is {self.rounds * len(self.parties)} "
                             f"turns; a game plays at most {MAX_TURNS}")
        options = {i.name: set(i.options) for i in self.issues}
        if len(options) != len(self.issues):
            raise ValueError("issue names must be distinct")
        for issue in self.issues:
            if len(set(issue.options)) != len(issue.options):
                raise ValueError(f"issue {issue.name!r}: option names must be distinct")
        for name, party in self.parties.items():
            if set(party.scores) != set(options):
                raise ValueError(f"party {name!r} must score every issue {sorted(options)}")
            for scored, points in party.scores.items():
                if set(points) != options[scored]:
                    raise ValueError(f"party {name!r}, issue {scored!r}: score every option {sorted(options[scored])}")
        unknown = [v for v in self.veto if v not in self.parties]
        if unknown:
            raise ValueError(f"veto names unknown parties {unknown}; parties: {list(self.parties)}")
        return self

    @property
    def roles(self) -> tuple[str, ...]:
        return tuple(self.parties)

    def points(self, party: str, deal: dict[str, str]) -> Fraction:
        """``party``'s exact total for a complete deal: the sum of its points for the chosen options."""
        sheet = self.parties[party].scores
        return sum((exact(sheet[i.name][deal[i.name]]) for i in self.issues), Fraction(0))

    def threshold(self, party: str) -> Fraction:
        return exact(self.parties[party].threshold)
