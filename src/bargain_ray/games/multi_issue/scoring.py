"""Points of a multi-issue deal, exactly as the briefs state them: shared by the outcome and the frontier."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from fractions import Fraction

from bargain_ray.games.multi_issue.config import MultiIssueConfig, exact


def utility(config: MultiIssueConfig, role: str, terms: Mapping[str, Decimal | float | Fraction]) -> Fraction:
    """Points of ``role`` for a deal, exactly as its brief states them."""
    total = Fraction(0)
    for t in config.terms:
        stake = config.roles[role].stakes[t.name]
        share = (exact(str(terms[t.name])) - exact(t.offset)) / exact(t.scale) / exact(t.levels)
        total += exact(stake.weight) * (1 - share if stake.prefers == "low" else share)
    return total


def fallback(config: MultiIssueConfig, role: str) -> Fraction:
    """The role's no-agreement points."""
    return exact(config.roles[role].no_agreement)
