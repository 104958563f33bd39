"""What the terminal shows while a sweep runs (the bar), and the exit code that says how it ended.

The figures beside the bar are each model's calls as ``execution.live`` reads them (the call journal and the
limiter); the end of a run is ``execution.summary``'s.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tqdm import tqdm

from bargain_ray.core.errors import Failure
from bargain_ray.core.records import GameRecord
from bargain_ray.core.status import ExitCode
from bargain_ray.execution.budget import BudgetState
from bargain_ray.execution.drift import DriftWatch
from bargain_ray.execution.live import LiveCalls, ModelCalls
from bargain_ray.execution.tally import Tally
from bargain_ray.store.seats import SeatBoard


def bar_postfix(tally: Tally, models: dict[str, ModelCalls]) -> str:
    """Agreements and unknown games, then each model's calls sent, in flight and answered, its spend and its 429s."""
    parts = [f"agree={tally.statuses.get('AGREEMENT', 0)} unknown={tally.games - tally.known}"]
    parts += [f"{k.split(':', 1)[-1]}: {m.sent} sent, {m.in_flight} in flight, {m.calls} answered, ${m.cost_usd:.2f}, "
              f"{m.rate_limited} 429s" for k, m in sorted(models.items())]
    return " | ".join(parts)


class SweepBar:
    """The terminal bar (tqdm): games of this invocation done, with ``bar_postfix`` beside the count, refreshed as
    calls come back (before the first game ends too). The ETA's clock starts at the first finished game, so Ray's
    warm-up does not skew the rate."""

    def __init__(self, total: int, enabled: bool, live: LiveCalls) -> None:
        self.bar = tqdm(total=total, unit="game", disable=not enabled, dynamic_ncols=True, smoothing=0.1)
        self.live = live
        self.started = False

    def show(self, records: list[GameRecord], tally: Tally) -> None:
        """Advance by ``records`` (already added to ``tally``); the count and the figures beside it change together."""
        self.live.clock.mark("game")
        self.live.tick(tally)
        postfix = bar_postfix(tally, self.live.models(tally))
        if self.started:
            self.bar.set_postfix_str(postfix, refresh=False)
            self.bar.update(len(records))
        else:  # count them without a rate: the rate is measured from here on
            self.started = True
            self.bar.reset()
            self.bar.n = self.bar.last_print_n = self.bar.initial = len(records)
            self.bar.set_postfix_str(postfix)

    def tick(self, tally: Tally) -> None:
        """Between finished games: show the calls as they are answered."""
        if self.live.tick(tally):
            self.bar.set_postfix_str(bar_postfix(tally, self.live.models(tally)))

    def close(self) -> None:
        self.bar.close()


@dataclass
class RunResult:
    """How one invocation's run ended, as the driver saw it."""

    tally: Tally
    to_run: int
    """Units this invocation set out to play."""
    live: LiveCalls
    finished_units: set[str] = field(default_factory=set)
    """Units with a known result after this invocation (earlier ones included)."""
    signal: str = ""
    signal_code: int = 0
    budget: BudgetState | None = None
    replies_journaled: bool = True
    """False under ``run.journal_calls=false``: a paid call's cost is journaled, its reply is not (never replayed)."""
    drift: DriftWatch | None = None
    seats: SeatBoard | None = None
    """The human seats as the run left them (a sweep with human seats)."""

    @property
    def drift_stopped(self) -> Failure | None:
        """What stopped the run under ``run.on_drift=stop`` (a model served as another version), None otherwise."""
        return self.drift.failure if self.drift is not None else None

    @property
    def unknown(self) -> int:
        return self.to_run - self.tally.known

    @property
    def budget_stopped(self) -> bool:
        return self.tally.budget_refused or (self.budget is not None and self.budget.closed and self.unknown > 0)

    @property
    def exit_code(self) -> int:
        if self.signal:
            return self.signal_code
        if self.drift_stopped:
            return ExitCode.USER_ERROR  # the researcher decides (run.on_drift=warn, or a new folder)
        if self.budget_stopped:
            return ExitCode.BUDGET
        return ExitCode.UNKNOWN_GAMES if self.unknown else ExitCode.OK
