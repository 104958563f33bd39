"""Time-dependent concession tactics (Faratin, Sierra and Jennings 1998).

The target utility falls from the best outcome toward the reservation value
as ``1 - t ** (1 / e)``: e < 1 is Boulware (holds firm, concedes late),
e = 1 Linear, e > 1 Conceder (concedes early).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Kind = Literal["boulware", "conceder", "linear"]
"""A named concession tactic."""
EXPONENTS: dict[Kind, float] = {"boulware": 0.2, "conceder": 5.0, "linear": 1.0}


class Concession(BaseModel):
    """A concession tactic's parameters, as a model's ``strategy`` block sets them: ``kind`` names an exponent,
    ``exponent`` sets one (and wins)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Kind = "linear"
    exponent: float | None = Field(None, gt=0)

    def concession_exponent(self) -> float:
        """The exponent this tactic concedes by."""
        return EXPONENTS[self.kind] if self.exponent is None else self.exponent


def target(best: float, reserve: float, t: float, e: float) -> float:
    """The utility aimed for at normalised time ``t`` in [0, 1]."""
    t = min(max(t, 0.0), 1.0)
    return reserve + (best - reserve) * (1.0 - t ** (1.0 / e))
