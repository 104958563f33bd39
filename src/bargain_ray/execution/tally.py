"""The games one invocation played, counted as they come back: their statuses, how many are known, why the others
are not, and each model's calls that no line of the call journal holds (replayed free, or failed after their
retries). What was paid is the call journal's (``store.paid``), never summed from games."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from bargain_ray.config.schema import NO_API
from bargain_ray.core.errors import Failure, FailureKind
from bargain_ray.core.records import GameRecord


def failure_label(failure: Failure | None) -> str:
    """The summary's name for why a game is unknown (its failure's kind, in ``core.errors.FAILURE_LABELS``)."""
    return (failure or Failure(kind=FailureKind.OTHER)).label


@dataclass
class Unpaid:
    """One model's calls of this invocation that were not paid now."""

    replayed: int = 0
    """Replayed free from the call journal."""
    failed: int = 0
    """Failed after their retries (never answered, so never paid)."""
    rate_limited: int = 0
    """429s the failed ones met."""


@dataclass
class Tally:
    """Running totals of the games that came back in this invocation."""

    games: int = 0
    statuses: dict[str, int] = field(default_factory=dict)
    known: int = 0
    unknown_reasons: Counter[str] = field(default_factory=Counter)
    unpaid: dict[str, Unpaid] = field(default_factory=dict)
    """Per model (``provider:model``)."""
    replayed: int = 0
    batches: int = 0
    own_crash: str | None = None
    """The first crash of bargain_ray's own code a game met (its failure's detail: what crashed, where)."""

    def add(self, record: GameRecord) -> None:
        self.games += 1
        outcome = record.outcome
        self.statuses[outcome.status.value] = self.statuses.get(outcome.status.value, 0) + 1
        if outcome.known:
            self.known += 1
        else:
            self.unknown_reasons[failure_label(outcome.failure)] += 1
            if outcome.failure is not None and outcome.failure.kind == FailureKind.INTERNAL:
                self.own_crash = self.own_crash or outcome.failure.detail
        for call in record.calls:
            if call.provider in NO_API or (call.status == "ok" and not call.resumed):
                continue  # a strategy's or a person's reply costs nothing; a paid one is the call journal's
            m = self.unpaid.setdefault(call.key, Unpaid())
            if call.resumed:
                m.replayed += 1
                self.replayed += 1
            else:
                m.failed += 1
                m.rate_limited += call.rate_limited

    @property
    def budget_refused(self) -> bool:
        return self.unknown_reasons[Failure(kind=FailureKind.BUDGET).label] > 0
