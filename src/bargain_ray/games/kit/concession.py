"""Time-dependent concession tactics (Faratin, Sierra and Jennings 1998).

The target utility falls from the best outcome toward the reservation value
as ``1 - t ** (1 / e)``: e < 1 is Boulware (holds firm, concedes late),
e = 1 Linear, e > 1 Conceder (concedes early).
"""

from __future__ import annotations

EXPONENTS = {"boulware": 0.2, "linear": 1.0, "conceder": 5.0}


def exponent(params: dict) -> float:
    """The concession exponent named by ``params`` (``kind`` and optional ``exponent``)."""
    if "exponent" in params:
        return float(params["exponent"])
    kind = params.get("kind", "linear")
    if kind not in EXPONENTS:
        raise ValueError(f"unknown concession kind {kind!r}; known: {', '.join(EXPONENTS)}")
    return EXPONENTS[kind]


def target(best: float, reserve: float, t: float, e: float) -> float:
    """The utility aimed for at normalised time ``t`` in [0, 1]."""
    t = min(max(t, 0.0), 1.0)
    return reserve + (best - reserve) * (1.0 - t ** (1.0 / e))
