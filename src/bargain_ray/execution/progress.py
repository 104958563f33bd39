"""Running totals of a sweep, what the terminal and the live view show while it runs, the end summary,
and the exit code that says how it ended.

What was paid is read back from the call journal (one line per paid reply), not summed from
finished games: a stop leaves games in flight whose replies were paid and journaled, and the
summary's paid figure must be the journal's. Replayed calls are free and counted apart.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import ray
from tqdm import tqdm

from bargain_ray.clients.limiter import ACTOR_NAME, NAMESPACE
from bargain_ray.core.errors import Failure, FailureKind
from bargain_ray.core.records import GameRecord
from bargain_ray.core.status import ExitCode
from bargain_ray.execution.budget import BudgetState
from bargain_ray.store.status import is_429, key_limits, write_limiter

LIMITER_EVERY_S = 2.0

def failure_label(failure: Failure | None) -> str:
    """The summary's name for why a game is unknown (its failure's kind, in ``core.errors.FAILURE_LABELS``)."""
    return (failure or Failure(kind=FailureKind.OTHER)).label


@dataclass
class Tally:
    """Running totals of the games that came back in this invocation."""

    games: int = 0
    statuses: dict[str, int] = field(default_factory=dict)
    cost_usd: float = 0.0
    per_model: dict[str, dict[str, float]] = field(default_factory=dict)
    known: int = 0
    unknown_reasons: Counter[str] = field(default_factory=Counter)
    paid: list[tuple[str, float]] = field(default_factory=list)
    """(unit_id, cost_usd) of each model call these games paid now (not replayed)."""
    replayed: int = 0
    batches: int = 0

    def add(self, record: GameRecord) -> None:
        self.games += 1
        outcome = record.outcome
        self.statuses[outcome.status.value] = self.statuses.get(outcome.status.value, 0) + 1
        if outcome.known:
            self.known += 1
        else:
            self.unknown_reasons[failure_label(outcome.failure)] += 1
        for call in record.calls:
            if call.provider == "strategy":
                continue
            m = self.per_model.setdefault(
                f"{call.provider}:{call.model}",
                {"paid": 0, "replayed": 0, "input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0},
            )
            if call.resumed:
                m["replayed"] += 1
                self.replayed += 1
                continue
            m["paid"] += 1
            m["input_tokens"] += call.usage.input_tokens
            m["output_tokens"] += call.usage.output_tokens
            m["cost_usd"] += call.cost_usd
            self.cost_usd += call.cost_usd
            self.paid.append((call.unit_id, call.cost_usd))

    @property
    def budget_refused(self) -> bool:
        return self.unknown_reasons[Failure(kind=FailureKind.BUDGET).label] > 0


def bar_postfix(tally: Tally, rate_limited: int) -> str:
    """Calls paid, 429s met, spend by model: what the terminal bar shows beside the count."""
    calls = sum(int(m["paid"]) for m in tally.per_model.values())
    spend = " ".join(f"{k.split(':', 1)[-1]} ${m['cost_usd']:.2f}" for k, m in sorted(tally.per_model.items()))
    return f"agree={tally.statuses.get('AGREEMENT', 0)} unknown={tally.games - tally.known} calls={calls} " \
           f"429s={rate_limited} {spend}".rstrip()


class SweepBar:
    """The terminal bar (tqdm): games of this invocation done, with ``bar_postfix`` beside the count.
    The ETA's clock starts at the first finished game, so Ray's warm-up does not skew the rate."""

    def __init__(self, total: int, enabled: bool) -> None:
        self.bar = tqdm(total=total, unit="game", disable=not enabled, dynamic_ncols=True, smoothing=0.1)
        self.rate_limited = 0
        self.started = False

    def show(self, records: list[GameRecord], tally: Tally) -> None:
        """Advance by ``records`` (already added to ``tally``)."""
        self.rate_limited += sum(is_429(str(e)) for r in records for c in r.calls for e in c.attempt_errors)
        if self.started:
            self.bar.update(len(records))
        else:  # count them without a rate: the rate is measured from here on
            self.started = True
            self.bar.reset()
            self.bar.n = self.bar.last_print_n = self.bar.initial = len(records)
        self.bar.set_postfix_str(bar_postfix(tally, self.rate_limited), refresh=False)

    def close(self) -> None:
        self.bar.close()


class LimiterWatch:
    """The cluster limiter's state written to ``limiter.json`` every ``LIMITER_EVERY_S`` for the live view
    (another process, outside the cluster); the loop never waits on the actor, and a failed write is skipped."""

    def __init__(self, path: Path, models: set[str]) -> None:
        self.path, self.models, self.ref, self.last = path, models, None, 0.0

    def tick(self) -> None:
        if self.ref is not None and ray.wait([self.ref], timeout=0)[0]:
            try:
                write_limiter(self.path, key_limits(ray.get(self.ref), self.models, time.monotonic()))
            except (ray.exceptions.RayError, OSError):
                pass  # the view shows the last snapshot; the journals report a full disk
            self.ref = None
        if self.ref is None and time.monotonic() - self.last >= LIMITER_EVERY_S:
            self.last = time.monotonic()
            try:
                self.ref = ray.get_actor(ACTOR_NAME, namespace=NAMESPACE).snapshot.remote()
            except ValueError:
                pass  # no model call yet: the actor starts with the first


@dataclass
class RunResult:
    """How one invocation's run ended, as the driver saw it."""

    tally: Tally
    to_run: int
    """Units this invocation set out to play."""
    paid_before: list[tuple[str, float]]
    """(unit_id, cost_usd) of every reply the folder had paid before this invocation."""
    paid_now: list[tuple[str, float]]
    """The same for the replies paid in this invocation (from the call journal when calls are journaled)."""
    finished_units: set[str] = field(default_factory=set)
    """Units with a known result after this invocation (earlier ones included)."""
    signal: str = ""
    signal_code: int = 0
    budget: BudgetState | None = None
    replies_journaled: bool = True
    """False under ``run.journal_calls=false``: a paid call's cost is journaled, its reply is not (never replayed)."""

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
        if self.budget_stopped:
            return ExitCode.BUDGET
        return ExitCode.UNKNOWN_GAMES if self.unknown else ExitCode.OK


def _usd(entries: list[tuple[str, float]]) -> float:
    return sum(cost for _, cost in entries)


def spend_lines(result: RunResult) -> list[str]:
    """Paid now, replayed free, paid before, and what is held by games still unfinished."""
    now, before = result.paid_now, result.paid_before
    open_calls = [e for e in now if e[0] not in result.finished_units]
    lines = [
        f"paid now: {len(now)} calls, ${_usd(now):.4f}"
        + (f" (of them {len(open_calls)} calls, ${_usd(open_calls):.4f}, in games still unfinished: "
           + ("replayed free when they run again)" if result.replies_journaled else
              "paid again when they run again: run.journal_calls=false journals no reply)") if open_calls else ""),
        f"replayed free: {result.tally.replayed} calls",
        f"paid in earlier invocations: {len(before)} calls, ${_usd(before):.4f}; "
        f"folder total ${_usd(before) + _usd(now):.4f}",
    ]
    if result.budget is not None:
        b = result.budget
        state = "reached: the rest of the run is stopped" if result.budget_stopped else "not reached"
        lines.append(f"budget: run.max_cost_usd=${b.cap_usd:.4f}, ${b.left_usd:.4f} left, {state}")
    return lines


def unknown_line(result: RunResult) -> str:
    """The last line: how many games are unknown, why (grouped), and what to do."""
    if not result.unknown:
        return "every game has a known result"
    reasons = Counter(result.tally.unknown_reasons)
    missing = result.unknown - sum(reasons.values())
    if missing:
        why = f"stopped by {result.signal}" if result.signal else (
            "not started (budget reached)" if result.budget_stopped else "not finished")
        reasons[why] += missing
    groups = ", ".join(f"{n} {label}" for label, n in reasons.most_common())
    if result.signal:
        todo = "run the same command again to resume"
    elif result.budget_stopped:
        todo = "raise run.max_cost_usd and run the same command again to go on"
    else:
        todo = "run the same command again to retry them"
    return f"{result.unknown} games unknown: {groups}; {todo}"


def summary(result: RunResult, path: Path, finished_before: int, counts: dict[str, int]) -> str:
    tally = result.tally
    lines = [
        f"sweep folder: {path}",
        f"games played now: {tally.games}  (finished before: {finished_before})",
        "statuses: " + ", ".join(f"{k} {v}" for k, v in sorted(tally.statuses.items())),
    ]
    for model, m in sorted(tally.per_model.items()):
        lines.append(
            f"  {model}: {int(m['paid'])} calls paid, {int(m['replayed'])} replayed free; "
            f"paid {int(m['input_tokens'])} input / {int(m['output_tokens'])} output tokens, ${m['cost_usd']:.4f}"
        )
    lines += spend_lines(result)
    if tally.batches:
        lines.append(f"batches sent through batch APIs: {tally.batches}")
    lines.append(f"tables: {', '.join(f'{k}.parquet {v} rows' for k, v in counts.items())}")
    if result.signal:
        lines.append(f"stopped by {result.signal}: no new games; games in flight stopped, their paid replies "
                     + ("are journaled and replay free on resume" if result.replies_journaled else
                        "are paid again on resume (run.journal_calls=false journals their cost, not their reply)"))
    lines.append(unknown_line(result))
    return "\n".join(lines)
