"""A judging run: a sweep folder's finished free-text games read again by a panel, as a sweep of its own.

The reads are units (``design.judging``) played by the runner every sweep uses (``driver.run_units``, with
``reader.ReadRunner``): the same clients, limiter, budget, call journal and batcher, in the folder's ``judging/``
(``store.judging``), so a judging run resumes where it stopped and pays each read once. Its manifest fixes what
determines the reads (the panel's models, whether names are shown, the provider) and is checked on every resume
as a sweep's is; each journaled read is kept only while its hash (the judged game, the prompt as rendered, the
reader's model) is the one the current plan gives it, so reads of a game whose transcript changed are never mixed
with the new ones. Growing the panel (another observer, more repeats, the swap) adds reads and keeps the others.
Nothing of the sweep's own files is written.
"""

from __future__ import annotations

import sys
from collections.abc import Collection
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from bargain_ray.config import ProviderConfig, SweepConfig
from bargain_ray.config.catalog import model_named
from bargain_ray.config.errors import ConfigError
from bargain_ray.config.judging import JudgeConfig
from bargain_ray.core.display import show
from bargain_ray.core.records import GameRecord
from bargain_ray.core.status import ExitCode
from bargain_ray.core.unit import Unit
from bargain_ray.design import ResolvedSweep
from bargain_ray.design.fingerprint import game_key
from bargain_ray.design.judging import (
    JudgingSpec,
    judged_game,
    judging_sweep,
    plan_reads,
    read_unit,
    typed_configs,
    worst_case,
)
from bargain_ray.execution.cluster import watch_cluster
from bargain_ray.execution.driver import run_units
from bargain_ray.execution.plan import describe
from bargain_ray.execution.progress import RunResult
from bargain_ray.execution.reader import RemoteReadRunner
from bargain_ray.execution.signals import stop_on_signals
from bargain_ray.execution.startup import StartupClock
from bargain_ray.execution.summary import model_line
from bargain_ray.execution.sweep import guarded, ray_for
from bargain_ray.providers import LocalModelUnavailable, check_service, missing_keys, provider_service
from bargain_ray.store import (
    MANIFEST,
    CorruptJournal,
    FolderLocked,
    GameJournal,
    hold_lock,
    journaled_units,
    read_batches,
    read_latest,
    read_manifest,
    write_status,
)
from bargain_ray.store.judging import ReadRow, judging_dir, write_reads
from bargain_ray.store.manifest import (
    SHOWN,
    ChangedConfig,
    DesignRecord,
    Manifest,
    UnreadableManifest,
    changed_fields,
    growth,
    today,
    write_manifest,
)
from bargain_ray.store.paths import CALLS_JOURNAL, JOURNAL


@dataclass(frozen=True)
class JudgingPlan:
    """What a judging run will do, decided before Ray starts and before any call."""

    spec: JudgingSpec
    todo: list[Unit]
    done: set[str]
    """Reads of the plan already journaled with a verdict (kept, never paid again)."""
    skipped: int
    """Games of the judged family with no verdict to read again (a format or technical failure)."""
    left_out: int
    """Reads journaled under an earlier panel that the current one does not make (kept in the journal, out of the
    table)."""

    def line(self, folder: Path) -> str:
        spec = self.spec
        line = (f"judging {folder}: {len(spec.games)} games, {len(spec.reads)} reads, {len(self.done)} finished, "
                f"{len(self.todo)} to run")
        if self.skipped:
            line += f"; {self.skipped} games without a verdict (format or technical failures) are not judged"
        if self.left_out:
            line += f"; {self.left_out} reads of an earlier panel are kept in the journal, out of the table"
        return line


JUDGE_ANEW = "delete {path} to judge anew"


def played_sweep(manifest: Manifest) -> SweepConfig:
    """The sweep a folder's manifest recorded, as a config: its grid, games, conditions and models as the games
    called them (without their runtime knobs, which a manifest leaves out)."""
    c = manifest.config
    return SweepConfig(grid=c.grid, games=c.games, conditions=c.conditions, models=c.models,
                       provider=ProviderConfig(name=c.provider))


def judged_records(folder: Path, configs: Collection[str], manifest: Manifest) -> list[GameRecord]:
    """The latest record of each game the folder's current design holds whose (game, condition) is in
    ``configs`` (``game_key``s: the judged family's)."""
    left_out = manifest.left_out()
    return [r for r in read_latest(folder) if game_key(r.unit.game, r.unit.condition) in configs
            and (left_out is None or not left_out(r.unit))]


def recorded_judging(path: Path) -> Manifest | None:
    """The judging folder's manifest, None before its first run; a folder of reads without one (or with one this
    version cannot read) is refused: its reads could not be checked against the panel."""
    if not (path / MANIFEST).exists():
        if (path / JOURNAL).exists() or (path / CALLS_JOURNAL).exists():
            raise ChangedConfig(f"{path} holds reads but no {MANIFEST}: they cannot be checked against this panel; "
                                f"restore {path / MANIFEST}, or {JUDGE_ANEW.format(path=path)}")
        return None
    try:
        return read_manifest(path)
    except UnreadableManifest as exc:
        raise ChangedConfig(f"{exc}; or {JUDGE_ANEW.format(path=path)}") from None


def refusal(path: Path, changes: list[tuple[str, object, object]]) -> str:
    """One line: what the current judging config changes of the one its reads were made under, and what to do."""
    named = "; ".join(f"{p} {show(a)} → {show(b)}" for p, a, b in changes[:SHOWN])
    more = f" (and {len(changes) - SHOWN} more)" if len(changes) > SHOWN else ""
    return (f"{path} holds reads of another panel: {named}{more}. Reads are never mixed: restore the panel (or the "
            f"provider) to resume, or {JUDGE_ANEW.format(path=path)}.")


def resolve_judging(folder: Path, config: JudgeConfig) -> ResolvedSweep:
    """The judging run of ``folder`` under ``config`` (``design.judging.judging_sweep``), each of the sweep's models
    priced by its model file; ConfigError (one line a mistake) for a panel that cannot judge this folder."""
    manifest = read_manifest(folder)
    played = played_sweep(manifest)
    configured = {letter: found for letter, m in played.models.items()
                  if m.is_llm and (found := model_named(m.name)) is not None}
    return judging_sweep(played, configured, manifest.components, config)


def plan_judging(folder: Path, config: JudgeConfig, sweep: ResolvedSweep) -> JudgingPlan:
    """The reads still to make over the finished games of ``folder``, and what its judging folder keeps.

    ConfigError or ChangedConfig (one line each) for a folder with nothing to judge or whose reads would mix; the
    judging manifest is written last, once nothing refused (not by a dry run)."""
    manifest = read_manifest(folder)
    configs = typed_configs(sweep)
    records = judged_records(folder, configs.keys(), manifest)
    games = [g for r in records if (g := judged_game(r, configs[game_key(r.unit.game, r.unit.condition)]))]
    if not games:
        raise ConfigError([f"{folder}: no finished free-text game (seed 004's family: +grid=orange, +grid=freetext_demo) "
                           "has an observer's verdict to read again"])
    spec = plan_reads(sweep, config, games)
    units = [read_unit(spec, read) for read in spec.reads.values()]
    path = judging_dir(folder)
    current = describe(sweep, today())
    recorded = recorded_judging(path)
    if recorded is not None and (changes := changed_fields(recorded, current)):
        raise ChangedConfig(refusal(path, changes))
    journaled = journaled_units(path)
    changed = [(u, journaled.finished[u.unit_id]) for u in units if journaled.finished.get(u.unit_id, u.hash) != u.hash]
    if changed:
        unit, old = changed[0]
        more = f" (and {len(changed) - 1} more reads)" if len(changed) > 1 else ""
        raise ChangedConfig(
            f"{path}: read {unit.unit_id} was made with read hash {old}, the current panel gives it {unit.hash}{more}: "
            f"what it reads changed (game {spec.reads[unit.unit_id].judged}'s transcript, the wording the observer "
            f"reads, or the reader's model). Reads are never mixed: restore what changed to resume, or "
            f"{JUDGE_ANEW.format(path=path)}.")
    read_batches(path)  # a corrupt batch journal is refused here, before Ray
    if not config.run.dry_run:
        remember(path, recorded, current, len(units))
    done = {u.unit_id for u in units if u.unit_id in journaled.finished}
    return JudgingPlan(spec=spec, todo=[u for u in units if u.unit_id not in done], done=done,
                       skipped=sum(1 for r in records if r.unit.unit_id not in spec.games),
                       left_out=len(set(journaled.lines) - set(spec.reads)))


def remember(path: Path, recorded: Manifest | None, current: Manifest, reads: int) -> None:
    """Write the judging manifest: the first panel, or the recorded one grown by the current (the designs kept
    oldest first, as a sweep keeps its own)."""
    designs = recorded.history() if recorded is not None else []
    if designs and designs[-1].same_as(current.config, current.components):
        return
    record = DesignRecord(at=datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC"), grid=current.grid,
                          config=current.config, components=current.components, git_commit=current.git_commit,
                          units=reads, changes=growth(designs[-1].config, current.config) if designs else [])
    base = recorded if recorded is not None else current
    path.mkdir(parents=True, exist_ok=True)
    write_manifest(path, base.model_copy(update={"grid": current.grid, "config": current.config,
                                                 "components": current.components, "designs": [*designs, record]}))


def read_rows(folder: Path, spec: JudgingSpec) -> list[ReadRow]:
    """One row per read of the plan that the judging journal holds (its latest record)."""
    rows = []
    for record in read_latest(judging_dir(folder), only=set(spec.reads)):
        read = spec.reads[record.unit.unit_id]
        judged = spec.games[read.judged]
        unit, metrics = judged.unit, record.metrics
        kind = metrics.get("allocation_type")
        confidence = metrics.get("observer_confidence")
        rows.append(ReadRow(
            read_id=read.read_id, unit_id=unit.unit_id, game=unit.game, condition=unit.condition, cell=unit.cell,
            pairing=unit.pairing, seed=unit.seed, block=unit.block, reader=read.reader,
            reader_model=record.unit.models_by_role[judged.observer], kind=read.kind, same_model=read.same_model,
            swapped=read.swapped, names_shown=spec.names_shown, repeat=read.repeat,
            status=record.outcome.status.value, known=record.outcome.known,
            allocation_type=str(kind) if record.outcome.known and kind is not None else None,
            confidence=float(confidence) if record.outcome.known and confidence is not None else None,
            recorded=judged.recorded, calls=len(record.calls), cost_usd=sum(c.cost_usd for c in record.calls)))
    return rows


def check_keys(folder: Path, spec: JudgingSpec) -> None:
    """Stop before Ray and the first call, naming a missing key and the offline way, or what the local model needs."""
    missing = missing_keys(spec.sweep)
    if missing:
        raise SystemExit(f"error: {', '.join(missing)} is not set, and the panel calls real providers. Set it in the "
                         f"environment, or rehearse the judging with `python -m bargain_ray.judge {folder} "
                         "provider=sim`.")
    try:
        check_service(spec.sweep)
    except LocalModelUnavailable as exc:
        raise SystemExit(f"error: {exc}") from None


def summary(result: RunResult, path: Path, plan: JudgingPlan, rows: int) -> list[str]:
    """The end of a judging run: what was read now, each model's calls, what was paid, and what is unknown."""
    tally, live = result.tally, result.live
    live.tail.read()
    now, before = live.tail.spend, live.before
    lines = [f"judging folder: {path}",
             f"reads made now: {tally.games}  (finished before: {len(plan.done)})",
             "verdicts: " + ", ".join(f"{k} {v}" for k, v in sorted(tally.statuses.items()))]
    lines += [model_line(m) for _, m in sorted(live.models(tally).items()) if m.calls or m.failed or m.replayed]
    lines.append(f"paid now: {now.calls} calls, ${now.cost_usd:.4f}; replayed free: {tally.replayed} calls; paid in "
                 f"earlier invocations: ${before.cost_usd:.4f}; judging total ${before.cost_usd + now.cost_usd:.4f}")
    if result.budget is not None:
        lines.append(f"budget: run.max_cost_usd=${result.budget.cap_usd:.4f}, ${result.budget.left_usd:.4f} left"
                     + (", reached: the rest of the reads are stopped" if result.budget_stopped else ""))
    if tally.batches:
        lines.append(f"batches sent through batch APIs: {tally.batches}")
    lines.append(f"table: {path / 'reads.parquet'} {rows} rows")
    if result.unknown:
        todo = ("raise run.max_cost_usd and run the same command again" if result.budget_stopped
                else "run the same command again: each read unread is made then, none paid twice")
        lines.append(f"{result.unknown} reads unknown: {todo}")
    return lines


def run_judging(folder: Path, config: JudgeConfig, started: float | None = None) -> int:
    """Plan, run and table a judging run of the sweep folder ``folder`` holding its judging folder's lock; the
    process exit code. Every refusal is one line on stderr before Ray starts and before any call."""
    path = judging_dir(folder)
    try:
        sweep = resolve_judging(folder, config)  # every mistake of the panel, before the judging folder is made
        return guarded(path, lambda: judge_locked(folder, config, sweep, StartupClock(started)))
    except (ConfigError, ChangedConfig, UnreadableManifest, FolderLocked, CorruptJournal) as exc:
        for line in exc.problems if isinstance(exc, ConfigError) else [str(exc)]:
            print(f"error: {line}", file=sys.stderr)
        return ExitCode.USER_ERROR


def judge_locked(folder: Path, config: JudgeConfig, sweep: ResolvedSweep, clock: StartupClock) -> int:
    path = judging_dir(folder)
    with hold_lock(path), stop_on_signals(running=False) as stop:
        plan = plan_judging(folder, config, sweep)
        spec = plan.spec
        if config.run.dry_run:
            print(plan.line(folder))
            print(f"at most ${worst_case(spec, [spec.reads[u.unit_id] for u in plan.todo]):.4f} (each read's "
                  "prompt at its model's max_tokens, no repair; nothing is spent in a dry run)")
            return ExitCode.OK
        check_keys(folder, spec)
        with ExitStack() as service:
            served: list[JudgingSpec] = []
            choice = ray_for(spec.sweep, plan.line(folder), clock,
                             lambda: served.append(service.enter_context(provider_service(spec))))
            with watch_cluster(choice, config.run.ray_timeout_s):
                write_status(path, "running", len(spec.reads))
                stop.running = True
                result = run_units(served[0].sweep, iter(plan.todo), len(plan.todo), GameJournal(path), path,
                                   plan.done, stop, clock, runner=RemoteReadRunner,
                                   spec=served[0].model_dump(mode="json"))
                service.close()
                rows = read_rows(folder, spec)
                write_reads(folder, rows)
                write_status(path, "interrupted" if stop.requested else "ended", len(spec.reads))
        print("\n".join(summary(result, path, plan, len(rows))))
        return stop.exit_code if stop.requested else result.exit_code
