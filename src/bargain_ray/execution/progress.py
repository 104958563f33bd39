"""Running totals of a sweep, what the terminal shows while it runs, the end summary, and the exit code that says
how it ended.

What was paid is read from the call journal (one line per paid reply), tailed by the driver as it grows, not
summed from finished games: a game in flight has paid calls long before it ends (the bar shows them from the
first reply), and a stop leaves games whose replies were paid and journaled. The summary's per-model lines and
its totals are sums over the same journal lines, so they cannot disagree. Replayed calls are free and counted
apart; calls that failed after their retries were never answered, so never paid. A run that journals no calls
(``run.journal_calls=false``) counts from its finished games instead, both per model and in total.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path

import ray
from tqdm import tqdm

from bargain_ray.clients.limiter import ACTOR_NAME, NAMESPACE
from bargain_ray.clients.snapshot import key_limits
from bargain_ray.core.errors import Failure, FailureKind
from bargain_ray.core.records import CallRecord, GameRecord
from bargain_ray.core.status import ExitCode
from bargain_ray.execution.budget import BudgetState
from bargain_ray.execution.drift import DriftWatch
from bargain_ray.store import CALLS_JOURNAL
from bargain_ray.store.calls import CallEntry, read_call_line
from bargain_ray.store.jsonl import complete_size
from bargain_ray.store.status import PaidCall, is_429, paid_call, tail_lines, write_limiter

LIMITER_EVERY_S = 2.0


def failure_label(failure: Failure | None) -> str:
    """The summary's name for why a game is unknown (its failure's kind, in ``core.errors.FAILURE_LABELS``)."""
    return (failure or Failure(kind=FailureKind.OTHER)).label


@dataclass
class ModelCalls:
    """One model's calls in this invocation: its line in the summary, its part of the bar."""

    paid: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    rate_limited: int = 0
    """429s met on the way (failed attempts of calls answered later, and of calls that failed)."""
    failed: int = 0
    """Calls that failed after their retries (never answered, so never paid)."""
    replayed: int = 0
    in_flight: int = 0
    """As the limiter last reported it (shared by every sweep of the key on a cluster)."""

    @property
    def sent(self) -> int:
        return self.paid + self.failed + self.in_flight


@dataclass
class Paid:
    """The paid calls of one invocation from one source: per model, and each call's (unit_id, cost_usd)."""

    models: dict[str, ModelCalls] = field(default_factory=dict)
    calls: list[tuple[str, float]] = field(default_factory=list)

    def add(self, call: PaidCall) -> None:
        m = self.models.setdefault(call.model, ModelCalls())
        m.paid += 1
        m.input_tokens += call.input_tokens
        m.output_tokens += call.output_tokens
        m.cost_usd += call.cost_usd
        m.rate_limited += call.rate_limited
        self.calls.append((call.unit_id, call.cost_usd))

    @property
    def usd(self) -> float:
        return sum(cost for _, cost in self.calls)


def _paid(call: CallRecord) -> PaidCall:
    return PaidCall(unit_id=call.unit_id, model=f"{call.provider}:{call.model}", input_tokens=call.usage.input_tokens,
                    output_tokens=call.usage.output_tokens, cost_usd=call.cost_usd, latency_s=call.latency_s,
                    rate_limited=sum(map(is_429, call.attempt_errors)), answered_at=call.answered_at)


@dataclass
class Tally:
    """Running totals of the games that came back in this invocation."""

    games: int = 0
    statuses: dict[str, int] = field(default_factory=dict)
    known: int = 0
    unknown_reasons: Counter[str] = field(default_factory=Counter)
    paid: Paid = field(default_factory=Paid)
    """The model calls these games paid now (not replayed): the source when calls are not journaled."""
    unpaid: dict[str, ModelCalls] = field(default_factory=dict)
    """Per model: calls replayed free, and calls that failed (with their 429s), which no journal line holds."""
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
            m = self.unpaid.setdefault(f"{call.provider}:{call.model}", ModelCalls())
            if call.resumed:
                m.replayed += 1
                self.replayed += 1
            elif call.status == "ok":
                self.paid.add(_paid(call))
            else:
                m.failed += 1
                m.rate_limited += sum(map(is_429, call.attempt_errors))

    @property
    def budget_refused(self) -> bool:
        return self.unknown_reasons[Failure(kind=FailureKind.BUDGET).label] > 0


class StartupClock:
    """Seconds from the command to the plan line, to Ray ready, to the first request sent and to the first game
    finished: the summary's start-up line."""

    LABELS = {"plan": "plan", "ray": "ray", "request": "first request", "game": "first game"}

    def __init__(self, started: float | None = None) -> None:
        self.started = time.monotonic() if started is None else started
        self.marks: dict[str, float] = {}

    def mark(self, name: str, at: float | None = None) -> None:
        """The first time ``name`` happened (monotonic ``at``, else now); later ones change nothing."""
        at = time.monotonic() if at is None else at
        self.marks[name] = min(self.marks.get(name, at - self.started), at - self.started)

    def line(self) -> str:
        """E.g. ``start-up: plan 0.6 s, ray 4.1 s, first request 6.0 s, first game 9.2 s`` (what happened)."""
        return "start-up: " + ", ".join(f"{label} {self.marks[k]:.1f} s" for k, label in self.LABELS.items()
                                        if k in self.marks)


def process_started() -> float:
    """When this process started, on the monotonic clock (Linux: ``/proc/self/stat``), so the start-up line counts
    the interpreter and the imports too; else now."""
    try:
        ticks = int(Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[19])
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return time.monotonic()
    return time.monotonic() - max(0.0, age)


class CallTail:
    """The call journal followed from where this invocation started: each paid reply read once, as it is written
    (and handed to ``drift``, when given, as the one place it is seen)."""

    def __init__(self, path: Path, drift: DriftWatch | None = None) -> None:
        self.file = path / CALLS_JOURNAL
        self.start = self.offset = complete_size(self.file)
        self.opened = time.monotonic()
        """No call of this invocation is sent before its tail exists: a bound for a node's clock that runs behind."""
        self.paid = Paid()
        self.drift = drift
        self.first_sent: float | None = None
        """The earliest send of the replies read (each answered, less its latency), on this process's monotonic
        clock."""

    def read(self) -> bool:
        """Take the lines written since the last read; whether there were any."""
        if not self.file.exists() or self.file.stat().st_size <= self.offset:
            return False
        lines, self.offset = tail_lines(self.file, self.offset)
        now = time.monotonic()
        behind = time.time() - now  # the wall clock less the monotonic one: a reply's answered_at, made monotonic
        for entry in map(read_call_line, lines):  # each line typed once, for the bar and for drift
            if (call := paid_call(entry)) is not None:
                self.paid.add(call)
                answered = now if call.answered_at is None else call.answered_at.timestamp() - behind
                sent = max(min(answered, now) - call.latency_s, self.opened)  # a node's clock may run ahead or behind
                self.first_sent = sent if self.first_sent is None else min(self.first_sent, sent)
            if self.drift is not None and isinstance(entry, CallEntry):
                self.drift.see(entry.reply, entry.call_id)
        return bool(lines)

    def before(self) -> Paid:
        """The paid calls journaled before this invocation."""
        lines, _ = tail_lines(self.file, 0, self.start)
        paid = Paid()
        for call in filter(None, (paid_call(read_call_line(line)) for line in lines)):
            paid.add(call)
        return paid


class LimiterWatch:
    """The cluster limiter's state written to ``limiter.json`` every ``LIMITER_EVERY_S`` for the live view
    (another process, outside the cluster), and each model's calls in flight for the bar; the loop never waits on
    the actor, and a failed write is skipped."""

    def __init__(self, path: Path, models: set[str]) -> None:
        self.path, self.models, self.ref, self.last = path, models, None, 0.0
        self.in_flight: dict[str, int] = {}
        self.first_in_flight: float | None = None

    def tick(self) -> bool:
        """Whether a new snapshot came in."""
        came = False
        if self.ref is not None and ray.wait([self.ref], timeout=0)[0]:
            try:
                keys = key_limits(ray.get(self.ref), self.models, time.monotonic())
                self.in_flight = {k.key: k.in_flight for k in keys}
                if self.first_in_flight is None and any(self.in_flight.values()):
                    self.first_in_flight = time.monotonic()  # a call was on its way by now
                came = True
                write_limiter(self.path, keys)
            except (ray.exceptions.RayError, OSError):
                pass  # the view shows the last snapshot; the journals report a full disk
            self.ref = None
        if self.ref is None and time.monotonic() - self.last >= LIMITER_EVERY_S:
            self.last = time.monotonic()
            try:
                self.ref = ray.get_actor(ACTOR_NAME, namespace=NAMESPACE).snapshot.remote()
            except ValueError:
                pass  # no model call yet: the actor starts with the first
        return came


class LiveCalls:
    """Each model's calls while the sweep runs, read with no Ray traffic of its own: the call journal tailed
    (answered, spend, 429s) and the limiter snapshot the driver polls anyway (in flight, every 2 s: between two
    snapshots a call answered leaves the in-flight count, so calls sent never go down)."""

    def __init__(self, path: Path, models: set[str], journaling: bool, clock: StartupClock | None = None,
                 drift: DriftWatch | None = None) -> None:
        self.tail = CallTail(path, drift)
        self.limiter = LimiterWatch(path, models)
        self.journaling = journaling
        self.clock = clock or StartupClock()
        self.sent: dict[str, int] = {}
        """Per model: calls sent as of the last snapshot (answered or failed then, plus in flight then)."""

    def tick(self, tally: Tally) -> bool:
        """Read what is new; whether anything was."""
        new = self.tail.read()
        if self.limiter.tick():
            new = True
            done = self._done(tally)
            self.sent = {k: done.get(k, 0) + n for k, n in self.limiter.in_flight.items()}
        for first in (self.tail.first_sent, self.limiter.first_in_flight):
            if first is not None:
                self.clock.mark("request", first)
        return new

    def _done(self, tally: Tally) -> Counter[str]:
        """Per model: calls answered or failed so far."""
        done = Counter({k: m.paid for k, m in self.paid(tally).models.items()})
        done.update({k: m.failed for k, m in tally.unpaid.items()})
        return done

    def paid(self, tally: Tally) -> Paid:
        """This invocation's paid calls: the call journal's when calls are journaled, else the finished games'."""
        return self.tail.paid if self.journaling else tally.paid

    def models(self, tally: Tally) -> dict[str, ModelCalls]:
        """Per model (``provider:model``): paid from ``paid``, failed and replayed from the games, in flight from the
        limiter's last snapshot less what was answered since."""
        out = {k: replace(m) for k, m in self.paid(tally).models.items()}
        for k, m in tally.unpaid.items():
            o = out.setdefault(k, ModelCalls())
            o.failed, o.replayed, o.rate_limited = m.failed, m.replayed, o.rate_limited + m.rate_limited
        for k, sent in self.sent.items():
            o = out.setdefault(k, ModelCalls())
            o.in_flight = max(0, sent - o.paid - o.failed)
        return out


def bar_postfix(tally: Tally, models: dict[str, ModelCalls]) -> str:
    """Agreements and unknown games, then each model's calls sent, in flight and answered, its spend and its 429s."""
    parts = [f"agree={tally.statuses.get('AGREEMENT', 0)} unknown={tally.games - tally.known}"]
    parts += [f"{k.split(':', 1)[-1]}: {m.sent} sent, {m.in_flight} in flight, {m.paid} answered, ${m.cost_usd:.2f}, "
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
            return ExitCode.USER_ERROR  # issue 21.2: the researcher decides (run.on_drift=warn, or a new folder)
        if self.budget_stopped:
            return ExitCode.BUDGET
        return ExitCode.UNKNOWN_GAMES if self.unknown else ExitCode.OK


def spend_lines(result: RunResult, now: Paid) -> list[str]:
    """Paid now (``now``: the figures the per-model lines sum), replayed free, paid before, and what is held by
    games still unfinished."""
    before = result.live.tail.before()
    open_calls = [e for e in now.calls if e[0] not in result.finished_units]
    open_usd = sum(cost for _, cost in open_calls)
    lines = [
        f"paid now: {len(now.calls)} calls, ${now.usd:.4f}"
        + (f" (of them {len(open_calls)} calls, ${open_usd:.4f}, in games still unfinished: "
           + ("replayed free when they run again)" if result.replies_journaled else
              "paid again when they run again: run.journal_calls=false journals no reply)") if open_calls else ""),
        f"replayed free: {result.tally.replayed} calls",
        f"paid in earlier invocations: {len(before.calls)} calls, ${before.usd:.4f}; "
        f"folder total ${before.usd + now.usd:.4f}",
    ]
    if result.budget is not None:
        b = result.budget
        state = "reached: the rest of the run is stopped" if result.budget_stopped else "not reached"
        lines.append(f"budget: run.max_cost_usd=${b.cap_usd:.4f}, ${b.left_usd:.4f} left, {state}")
    return lines


def unknown_line(result: RunResult) -> str:
    """The last line: how many games are unknown, why (grouped), and what to do; a drift stop says first which
    model was served as what."""
    if (drift := result.drift_stopped) is not None:
        return (f"stopped ({drift.detail}; run.on_drift=stop): {result.unknown} games unknown; to go on under the new "
                "version run again with run.on_drift=warn (calls.parquet's drift column marks its calls), or start a "
                "new sweep folder for it")
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


def model_line(model: str, m: ModelCalls) -> str:
    failed = f", {m.failed} failed after their retries" if m.failed else ""
    return (f"  {model}: {m.paid} calls paid, {m.replayed} replayed free{failed}; paid {m.input_tokens} input / "
            f"{m.output_tokens} output tokens, ${m.cost_usd:.4f}")


def summary(result: RunResult, path: Path, finished_before: int, counts: dict[str, int], dropped: int = 0) -> str:
    """The end of a run, one line a fact; ``dropped``: journaled games of earlier designs of the folder that the
    current one leaves out (kept in the journal, not in the tables)."""
    tally, live = result.tally, result.live
    live.tail.read()  # every line the run journaled (its journal is closed by now)
    lines = [
        f"sweep folder: {path}",
        f"games played now: {tally.games}  (finished before: {finished_before})",
        "statuses: " + ", ".join(f"{k} {v}" for k, v in sorted(tally.statuses.items())),
    ]
    lines += [model_line(k, m) for k, m in sorted(live.models(tally).items()) if m.paid or m.failed or m.replayed]
    lines += spend_lines(result, live.paid(tally))
    if tally.batches:
        lines.append(f"batches sent through batch APIs: {tally.batches}")
    lines += result.drift.lines() if result.drift is not None else []
    lines.append(f"tables: {', '.join(f'{k}.parquet {v} rows' for k, v in counts.items())}" + (
        f"; {dropped} games of earlier designs of this folder are not in this design: kept in the journal, "
        "left out of the tables" if dropped else ""))
    lines.append(live.clock.line())
    if result.signal:
        lines.append(f"stopped by {result.signal}: no new games; games in flight stopped, their paid replies "
                     + ("are journaled and replay free on resume" if result.replies_journaled else
                        "are paid again on resume (run.journal_calls=false journals their cost, not their reply)"))
    lines.append(unknown_line(result))
    return "\n".join(lines)
