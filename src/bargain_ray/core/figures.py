"""Exact figures as every outcome record writes them."""

from __future__ import annotations

from fractions import Fraction
from typing import Any


def figure(x: Fraction) -> dict[str, Any]:
    """A figure both exactly (as a fraction string) and as a number."""
    text = str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"
    return {"exact": text, "value": float(x) if x.denominator != 1 else int(x)}
