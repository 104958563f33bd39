"""One sweep from a validated config: plan, resume, run, tables, summary."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

from bargain_ray.budget import estimate
from bargain_ray.clients import key_env
from bargain_ray.clients.services import provider_service
from bargain_ray.config import SweepConfig
from bargain_ray.design import Unit, components, effective_model, units
from bargain_ray.report import build_report
from bargain_ray.runner import Tally, run_units
from bargain_ray.store import SweepStore


def sweep_dir(sweep: SweepConfig) -> Path:
    return Path(sweep.run.dir) if sweep.run.dir else Path("outputs") / sweep.grid.name


def missing_keys(sweep: SweepConfig) -> list[str]:
    """Environment variables the configured providers need but do not have."""
    missing = []
    for letter in sorted(sweep.models):
        model = effective_model(sweep, letter)
        env = key_env(model, model.provider) if model.provider not in ("sim", "local", "strategy") else None
        if env and not os.environ.get(env) and env not in missing:
            missing.append(env)
    return missing


def check_keys(sweep: SweepConfig) -> None:
    """Stop before the first call, naming the missing key and the offline way."""
    missing = missing_keys(sweep)
    if missing:
        raise SystemExit(
            f"error: {', '.join(missing)} is not set, and grid {sweep.grid.name!r} calls real providers. "
            f"Set it in the environment, or rehearse offline with "
            f"`python -m bargain_ray +grid={sweep.grid.name} provider=sim` "
            "(simulated provider) or `+grid=demo` (strategy agents)."
        )


def git_commit() -> str | None:
    """The commit of the code that runs the sweep, for the dataset's provenance."""
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=Path(__file__).parent)
    except OSError:
        return None
    return out.stdout.strip() or None


def plan(sweep: SweepConfig, store: SweepStore) -> tuple[Callable[[], Iterator[Unit]], int, set[str]]:
    """(a fresh iterator over the units still to play, how many, the ids already finished)."""
    manifest = store.open(sweep.grid.name, components(sweep), {"git_commit": git_commit()})
    done = set(store.finished())

    def todo() -> Iterator[Unit]:
        return (u for u in units(sweep, manifest["created"]) if u.unit_id not in done)

    return todo, sum(1 for _ in todo()), done


def summary(tally: Tally, store: SweepStore, finished_before: int, interrupted: bool, counts: dict[str, int]) -> str:
    lines = [
        f"sweep folder: {store.path}",
        f"games played now: {tally.games}  (finished before: {finished_before})",
        "statuses: " + ", ".join(f"{k} {v}" for k, v in sorted(tally.statuses.items())),
    ]
    for model, m in sorted(tally.per_model.items()):
        lines.append(
            f"  {model}: {int(m['calls'])} calls, {int(m['input_tokens'])} input / "
            f"{int(m['output_tokens'])} output tokens, ${m['cost_usd']:.4f}"
        )
    lines.append(f"tables: {', '.join(f'{k}.parquet {v} rows' for k, v in counts.items())}")
    if interrupted:
        lines.append("interrupted: run the same command again to resume")
    return "\n".join(lines)


def run_sweep(sweep: SweepConfig) -> int:
    """Run (or resume) a sweep; returns a process exit code."""
    if not sweep.run.dry_run:
        check_keys(sweep)
    store = SweepStore(sweep_dir(sweep))
    todo, count, done = plan(sweep, store)
    finished = len(done)
    print(f"grid {sweep.grid.name}: {count + finished} units, {finished} finished, {count} to run")
    if sweep.run.dry_run:
        print(estimate(sweep, list(todo())))
        return 0
    with provider_service(sweep) as served:
        tally, interrupted = run_units(served, todo(), count, store, done)
    counts = store.write_tables()
    print(summary(tally, store, finished, interrupted, counts))
    if sweep.run.report and not interrupted:
        print(f"report: {build_report(store.path)}")
    return 130 if interrupted else 0


