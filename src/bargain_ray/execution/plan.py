"""The plan of a sweep: its manifest checked, the finished units checked, and the ones still to play.

It runs before Ray starts and before any call, so every refusal costs nothing.

A folder may grow (``store.manifest``): when the config's design is not the folder's current one but changes
nothing any recorded design determines, it becomes the folder's next design. Its units are laid out with the
earlier designs' (``design.units``), so every unit they share keeps its id and hash: a finished one is kept and
never paid again, a part-way one replays its journaled calls, a new one runs. Units of earlier designs it leaves
out stay in the journals, out of the tables (``Manifest.left_out``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from bargain_ray.config.schema import block_seeds_of
from bargain_ray.core.provenance import read_code_version
from bargain_ray.core.unit import Unit
from bargain_ray.design import ResolvedSweep, units
from bargain_ray.design.estimate import estimate, measure
from bargain_ray.design.units import laid_out, renamed
from bargain_ray.play.probe import typical_calls
from bargain_ray.providers.routing import key_names
from bargain_ray.store import JOURNAL, ChangedConfig, journaled_units, read_batches, read_call_lines, read_latest
from bargain_ray.store.calls import calls_journal_path
from bargain_ray.store.manifest import (
    NEW_FOLDER,
    DesignRecord,
    Determinants,
    Manifest,
    growth,
    recorded_manifest,
    refusal,
    refuse_changes,
    today,
    write_manifest,
)


def describe(sweep: ResolvedSweep, created: str) -> Manifest:
    """The manifest the current config gives, dated ``created``."""
    config = Determinants(
        grid=sweep.grid,
        provider=sweep.provider.name,
        games=sweep.games,
        conditions=sweep.conditions,
        models={letter: sweep.models[letter] for letter in sorted(sweep.models)},
    )
    code = read_code_version(key_names(sweep))
    return Manifest(grid=sweep.grid.name, created=created, block_seeds=block_seeds_of(created), config=config,
                    components=sweep.components, local_conf=sweep.config.local_conf,
                    git_commit=code.commit if code else None, git_diff=code.diff if code else None)


@dataclass(frozen=True)
class Plan:
    """What a run of the sweep will do, decided before Ray starts."""

    todo: Callable[[], Iterator[Unit]]
    """A fresh iterator over the units still to play."""
    count: int
    """Units still to play."""
    done: set[str]
    """Units of the design already finished (kept, never paid again)."""
    new: int
    """Units of the design no earlier design of the folder had (``count`` holds them)."""
    dropped: int
    """Journaled units of earlier designs this design leaves out (in the journals, out of the tables)."""
    design: int
    """Which design of the folder this is, 1 for the first."""
    grown: bool
    """Whether this run makes the config's design the folder's next one."""

    def line(self, grid: str) -> str:
        """The plan line: the units, and for a grown design what is kept and new, and what is left out."""
        line = f"grid {grid}: {self.count + len(self.done)} units, {len(self.done)} finished, {self.count} to run"
        if self.grown:
            line += (f"; design {self.design} of this folder: {len(self.done)} kept, {self.new} new, "
                     f"{self.count - self.new} unfinished of earlier designs")
        if self.dropped:
            line += (f"; {self.dropped} games of earlier designs are not in this one (kept in the journal, "
                     "out of the tables)")
        return line


def plan(sweep: ResolvedSweep, path: Path) -> Plan:
    """The units still to play, and what the folder keeps.

    A finished unit is skipped only when its journaled hash equals the one the current design gives it;
    any other finished unit refuses the resume (this catches what the manifest comparison cannot see), and
    so does any record, finished or not, of a unit no design of the folder ever had. Every journal of the
    folder is read whole here, so a line that is not its record stops the run before Ray starts
    (``CorruptJournal``). The manifest is written last, once nothing refused: a new folder's, or a grown
    design's; never by a dry run, which binds nothing (it only says what a run would keep and add, so a later run
    with another config is free to start the folder)."""
    current = describe(sweep, today())
    recorded = recorded_manifest(path)
    if recorded is not None:
        refuse_changes(path, recorded, current)
    designs = recorded.history() if recorded is not None else []
    grown = not designs or not designs[-1].same_as(current.config, current.components)
    grids = [d.config.grid for d in designs] + ([sweep.grid] if grown else [])
    if changes := renamed(grids[:-1], grids[-1]):
        raise ChangedConfig(refusal(path, changes))
    folder = recorded or current
    created, seeds = folder.created, folder.block_seeds
    placed = laid_out(grids, created)
    journaled = journaled_units(path)
    done = journaled.finished
    count, new, seen, changed, design = 0, 0, set(), [], set()
    for u in units(sweep, created, grids[:-1], seeds):
        design.add(u.unit_id)
        recorded_hash = done.get(u.unit_id)
        if recorded_hash is None:
            count += 1
            new += placed[u.unit_id] == len(grids) - 1
        elif recorded_hash == u.hash:
            seen.add(u.unit_id)
        else:
            changed.append((u.unit_id, recorded_hash, u.hash))
    if changed:
        unit_id, old, now = changed[0]
        more = f" (and {len(changed) - 1} more units)" if len(changed) > 1 else ""
        raise ChangedConfig(
            f"{path}: finished unit {unit_id} was played with unit hash {old}, the current design gives it {now}"
            f"{more}: what determines its game changed (its config, the texts its models read, or the code). "
            f"Results are never mixed: restore what changed to resume, or {NEW_FOLDER}."
        )
    refuse_strays(path / JOURNAL, {u: n for u, n in journaled.lines.items() if u not in placed})
    refuse_strays(calls_journal_path(path), stray_calls(path, set(placed)))
    read_batches(path)
    if grown:
        record = design_record(current, designs, placed, design)
        manifest = (recorded or current).model_copy(update={
            "grid": current.grid, "config": current.config, "components": current.components,
            "designs": [*first_counted(designs, placed), record]})
        if not sweep.run.dry_run:
            path.mkdir(parents=True, exist_ok=True)
            write_manifest(path, manifest)

    def todo() -> Iterator[Unit]:
        return (u for u in units(sweep, created, grids[:-1], seeds) if u.unit_id not in done)

    dropped = sum(1 for u in journaled.lines if u not in design)
    return Plan(todo=todo, count=count, done=seen, new=new, dropped=dropped, design=len(grids),
                grown=grown and recorded is not None)


def dry_run(sweep: ResolvedSweep, path: Path, planned: Plan) -> str:
    """What a dry run prints: the plan line, then the estimate of the units still to play and its upper bound
    (``design.estimate``), from the calls and tokens of the folder's finished games where it has them."""
    kept = measure(read_latest(path, planned.done))
    return planned.line(sweep.grid.name) + "\n" + estimate(sweep, list(planned.todo()), typical_calls, kept)


def design_record(current: Manifest, designs: list[DesignRecord], placed: dict[str, int],
                  design: set[str]) -> DesignRecord:
    """The history entry of the folder's next design: now, what it lays out, adds and leaves out, and how it
    differs from the design before."""
    generation = len(designs)
    return DesignRecord(
        at=datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC"), grid=current.grid, config=current.config,
        components=current.components, git_commit=current.git_commit, git_diff=current.git_diff, units=len(design),
        added=sum(1 for g in placed.values() if g == generation),
        dropped=sum(1 for u, g in placed.items() if g < generation and u not in design),
        changes=growth(designs[-1].config, current.config) if designs else [])


def first_counted(designs: list[DesignRecord], placed: dict[str, int]) -> list[DesignRecord]:
    """``designs`` with the counts of a first design from before designs were kept filled in (all its units
    were added by it)."""
    if len(designs) != 1 or designs[0].units is not None:
        return designs
    first = sum(1 for g in placed.values() if g == 0)
    return [designs[0].model_copy(update={"units": first, "added": first, "dropped": 0})]


def stray_calls(path: Path, design: set[str]) -> dict[str, int]:
    """unit_id -> first line of the call journal's entries of units not in ``design`` (the journal read whole)."""
    strays: dict[str, int] = {}
    for number, entry in enumerate(read_call_lines(path), 1):
        if entry.unit_id not in design:
            strays.setdefault(entry.unit_id, number)
    return strays


def refuse_strays(file: Path, strays: dict[str, int]) -> None:
    """Refuse a journal holding records of units no design of the folder has (``strays``: unit -> first line)."""
    if strays:
        unit_id, line = min(strays.items(), key=lambda item: item[1])
        more = f" (and {len(strays) - 1} more units)" if len(strays) > 1 else ""
        raise ChangedConfig(
            f"{file}:{line}: the journal holds a record of unit {unit_id}{more}, which the current design does not "
            f"have, nor any earlier design of this folder. Results are never mixed: restore the config or code that "
            f"made it to resume, or {NEW_FOLDER}."
        )
