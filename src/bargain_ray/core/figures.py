"""Exact figures: the one codec every outcome record, metric and table uses.

A figure is written as ``{"exact": "77/80", "value": 0.9625}``: the fraction as text (what a
re-score compares) and the number (what a table holds). ``Figure.of`` makes one (a family's outcome
model holds ``Figure`` fields), ``exact_of`` and ``value_of`` read one back, typed or as JSON (a table
row); nothing else parses the pair.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, TypedDict

from pydantic import BaseModel, ConfigDict


class Figure(BaseModel):
    """A figure both exactly (a fraction string) and as a number."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    exact: str
    value: int | float

    @classmethod
    def of(cls, x: Fraction) -> Figure:
        text = str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"
        return cls(exact=text, value=int(x) if x.denominator == 1 else float(x))

    @property
    def fraction(self) -> Fraction:
        return Fraction(self.exact)


class FigureJSON(TypedDict):
    """A figure as a decoded JSON value carries it (an outcome as the tables flatten it)."""

    exact: str
    value: int | float


def is_figure(v: Any) -> bool:
    """Whether a decoded JSON value is a figure."""
    return isinstance(v, dict) and set(v) == {"exact", "value"}


def exact_of(v: Figure | FigureJSON | None) -> Fraction | None:
    """The exact fraction of a figure (None stays None)."""
    return None if v is None else Figure.model_validate(v).fraction


def value_of(v: Figure | FigureJSON | None) -> float | None:
    """The figure as a float, for tables (None stays None)."""
    return None if v is None else float(Figure.model_validate(v).value)
