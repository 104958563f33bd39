"""The config of a multi-party scorable negotiation (seed 003).

The prompts print the score sheets and thresholds from these fields and the
engine and metrics score from the same fields, so the two cannot disagree.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from bargain_ray.games.kit.turns import MAX_TURNS, exact


class Issue(BaseModel):
    """One issue and its options; a deal picks exactly one option per issue."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    options: tuple[str, ...] = Field(min_length=1)


class Party(BaseModel):
    """One seat: its score sheet (issue -> option -> points) and its private threshold."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    threshold: float
    scores: dict[str, dict[str, float]]


class ScorableConfig(BaseModel):
    """A whole game; another table is only another YAML file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    family: Literal["scorable"] = "scorable"
    name: str
    parties: dict[str, Party] = Field(description="seat name -> party, in the order of the rotation")
    issues: tuple[Issue, ...] = Field(min_length=1)
    veto: tuple[str, ...] = ()
    rounds: int = Field(4, ge=1, le=MAX_TURNS)
    public_score_sheets: bool = True
    max_repairs: int = Field(2, ge=0)
    max_enumerated_deals: int = Field(100_000, ge=1, description="larger deal spaces are not enumerated for metrics")
    source: str = Field("ours", description='where the table and its wording come from: "seed 003" or "ours"')

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
            for issue, points in party.scores.items():
                if set(points) != options[issue]:
                    raise ValueError(f"party {name!r}, issue {issue!r}: score every option {sorted(options[issue])}")
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
