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
from bargain_ray.store import ChangedConfig, finished_units, open_manifest
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
    any other finished unit refuses the resume (this catches what the manifest comparison cannot see)."""
    manifest = open_manifest(path, describe(sweep, today()))
    done = finished_units(path)
    count, seen, changed = 0, set(), []
    for u in units(sweep, manifest.created):
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
    stray = sorted(set(done) - seen)
    if stray:
        more = f" (and {len(stray) - 1} more)" if len(stray) > 1 else ""
        raise ChangedConfig(
            f"{path}: the journal holds finished unit {stray[0]}{more}, which the current design does not have. "
            f"Results are never mixed: restore the config or code that made it to resume, or {NEW_FOLDER}."
        )

    def todo() -> Iterator[Unit]:
        return (u for u in units(sweep, manifest.created) if u.unit_id not in done)

    return todo, count, seen
