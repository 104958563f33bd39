"""The plan of a sweep: its manifest checked, the finished units checked, and the ones still to play.

It runs before Ray starts and before any call, so every refusal costs nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

from bargain_ray.core.provenance import read_code_version
from bargain_ray.core.unit import Unit
from bargain_ray.design import ResolvedSweep, units
from bargain_ray.providers.routing import key_names
from bargain_ray.store import JOURNAL, ChangedConfig, journaled_units, open_manifest, read_batches, read_call_lines
from bargain_ray.store.calls import calls_journal_path
from bargain_ray.store.manifest import NEW_FOLDER, Determinants, Manifest, today


def describe(sweep: ResolvedSweep, created: str) -> Manifest:
    """The manifest the current config gives, dated ``created``."""
    config = Determinants(
        grid=sweep.grid,
        provider=sweep.provider.name,
        games=sweep.games,
        conditions=sweep.conditions,
        models={letter: sweep.models[letter] for letter in sorted(sweep.models)},
    )
    return Manifest(grid=sweep.grid.name, created=created, config=config, components=sweep.components,
                    local_conf=sweep.config.local_conf,
                    git_commit=code.commit if (code := read_code_version(key_names(sweep))) else None)


def plan(sweep: ResolvedSweep, path: Path) -> tuple[Callable[[], Iterator[Unit]], int, set[str]]:
    """(a fresh iterator over the units still to play, how many, the ids already finished).

    A finished unit is skipped only when its journaled hash equals the one the current design gives it;
    any other finished unit refuses the resume (this catches what the manifest comparison cannot see), and
    so does any record, finished or not, of a unit the design does not have. Every journal of the folder is
    read whole here, so a line that is not its record stops the run before Ray starts (``CorruptJournal``)."""
    manifest = open_manifest(path, describe(sweep, today()))
    journaled = journaled_units(path)
    done = journaled.finished
    count, seen, changed, design = 0, set(), [], set()
    for u in units(sweep, manifest.created):
        design.add(u.unit_id)
        recorded = done.get(u.unit_id)
        if recorded is None:
            count += 1
        elif recorded == u.hash:
            seen.add(u.unit_id)
        else:
            changed.append((u.unit_id, recorded, u.hash))
    if changed:
        unit_id, old, new = changed[0]
        more = f" (and {len(changed) - 1} more units)" if len(changed) > 1 else ""
        raise ChangedConfig(
            f"{path}: finished unit {unit_id} was played with unit hash {old}, the current design gives it {new}"
            f"{more}: what determines its game changed (its config, the texts its models read, or the code). "
            f"Results are never mixed: restore what changed to resume, or {NEW_FOLDER}."
        )
    refuse_strays(path / JOURNAL, {u: n for u, n in journaled.lines.items() if u not in design})
    refuse_strays(calls_journal_path(path), stray_calls(path, design))
    read_batches(path)

    def todo() -> Iterator[Unit]:
        return (u for u in units(sweep, manifest.created) if u.unit_id not in done)

    return todo, count, seen


def stray_calls(path: Path, design: set[str]) -> dict[str, int]:
    """unit_id -> first line of the call journal's entries of units not in ``design`` (the journal read whole)."""
    strays: dict[str, int] = {}
    for number, entry in enumerate(read_call_lines(path), 1):
        if entry.unit_id not in design:
            strays.setdefault(entry.unit_id, number)
    return strays


def refuse_strays(file: Path, strays: dict[str, int]) -> None:
    """Refuse a journal holding records of units the design does not have (``strays``: unit -> first line)."""
    if strays:
        unit_id, line = min(strays.items(), key=lambda item: item[1])
        more = f" (and {len(strays) - 1} more units)" if len(strays) > 1 else ""
        raise ChangedConfig(
            f"{file}:{line}: the journal holds a record of unit {unit_id}{more}, which the current design does not "
            f"have. Results are never mixed: restore the config or code that made it to resume, or {NEW_FOLDER}."
        )
