"""The end of a run on the terminal, one line a fact: what was played, each model's calls, what was paid now and
before (the call journal's, ``store.paid``: the per-model lines and the totals are sums over the same lines, so
they cannot disagree), the start-up, and last what is unknown and what to do."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from bargain_ray.core.status import Status
from bargain_ray.execution.live import ModelCalls
from bargain_ray.execution.progress import RunResult
from bargain_ray.execution.tally import Tally

FORMAT_FAILURE_FLAG = 0.5
"""The share of a run's games ending in a format failure past which its summary names the scenario or the prompt as
the likely cause (ours): a model that reads a sound brief keeps to its format far more often than that."""


def format_failure_line(tally: Tally, grid: str) -> list[str]:
    """A line when most games of the run ended in a format failure: the scenario or the prompt is the likely cause."""
    failed = tally.statuses.get(Status.FORMAT_FAILURE.value, 0)
    if not tally.games or failed / tally.games <= FORMAT_FAILURE_FLAG:
        return []
    return [f"format failures: {failed} of {tally.games} games ({failed / tally.games:.0%}, more than the "
            f"{FORMAT_FAILURE_FLAG:.0%} we flag): the scenario or the prompt is the likely cause, more than the models; "
            f"check it with `python -m bargain_ray.check +grid={grid}` (and the same overrides), rehearse it with "
            "provider=sim, and read the rule each refused reply broke in calls.parquet's error column"]


def spend_lines(result: RunResult) -> list[str]:
    """Paid now (the figures the per-model lines sum), replayed free, paid before, and what is held by games still
    unfinished."""
    tail, before = result.live.tail, result.live.before
    now = tail.spend
    still = [u for u in tail.units if u not in result.finished_units]
    open_calls, open_usd = sum(tail.units[u] for u in still), sum(tail.unit_usd[u] for u in still)
    lines = [
        f"paid now: {now.calls} calls, ${now.cost_usd:.4f}"
        + (f" (of them {open_calls} calls, ${open_usd:.4f}, in games still unfinished: "
           + ("replayed free when they run again)" if result.replies_journaled else
              "paid again when they run again: run.journal_calls=false journals no reply)") if open_calls else ""),
        f"replayed free: {result.tally.replayed} calls",
        f"paid in earlier invocations: {before.calls} calls, ${before.cost_usd:.4f}; "
        f"folder total ${before.cost_usd + now.cost_usd:.4f}",
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


def model_line(m: ModelCalls) -> str:
    failed = f", {m.failed} failed after their retries" if m.failed else ""
    return (f"  {m.model}: {m.calls} calls paid, {m.replayed} replayed free{failed}; paid {m.input_tokens} input / "
            f"{m.output_tokens} output tokens, ${m.cost_usd:.4f}")


def summary(result: RunResult, path: Path, finished_before: int, counts: dict[str, int], dropped: int = 0,
            grid: str = "NAME") -> str:
    """The end of a run; ``dropped``: journaled games of earlier designs of the folder that the current one leaves
    out (kept in the journal, not in the tables); ``grid``: the grid's name, for the command a flag names."""
    tally, live = result.tally, result.live
    live.tail.read()  # every line the run journaled (its journal is closed by now)
    lines = [
        f"sweep folder: {path}",
        f"games played now: {tally.games}  (finished before: {finished_before})",
        "statuses: " + ", ".join(f"{k} {v}" for k, v in sorted(tally.statuses.items())),
        *format_failure_line(tally, grid),
    ]
    lines += [model_line(m) for _, m in sorted(live.models(tally).items()) if m.calls or m.failed or m.replayed]
    lines += spend_lines(result)
    if tally.batches:
        lines.append(f"batches sent through batch APIs: {tally.batches}")
    lines += result.drift.lines() if result.drift is not None else []
    if result.seats is not None:
        lines.append(result.seats.line() + (" (a seat still waiting has had no person: its game is unknown, never a "
                                             "disagreement, and waits for one when the sweep runs again)"
                                             if result.seats.waiting else ""))
    lines.append(f"tables: {', '.join(f'{k}.parquet {v} rows' for k, v in counts.items())}" + (
        f"; {dropped} games of earlier designs of this folder are not in this design: kept in the journal, "
        "left out of the tables" if dropped else ""))
    lines.append(live.clock.line())
    if result.signal:
        lines.append(f"stopped by {result.signal}: no new games; games in flight stopped, their paid replies "
                     + ("are journaled and replay free on resume" if result.replies_journaled else
                        "are paid again on resume (run.journal_calls=false journals their cost, not their reply)"))
    if tally.own_crash:
        lines.append(f"bargain_ray's own code crashed: {tally.own_crash}")
    lines.append(unknown_line(result))
    return "\n".join(lines)
