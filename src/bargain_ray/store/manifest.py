"""``manifest.json``: what names and determines the sweep's units, checked field by field on every resume.

A folder may grow: a resume may add blocks, seeds, pairings, models, conditions, assignments, first speakers or
designs, and may leave some out. What it may not do is change what any design of the folder recorded: a game, a
condition or a model that a recorded design has keeps its every field, the grid seed and each block's seed stay,
and so does every fingerprint part both have. The designs are kept, oldest first (``designs``), each with when it
was first run and what it added; ``config`` and ``components`` are the current one's.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, field_serializer

from bargain_ray.config import RUNTIME_KEYS, Condition, GridConfig, LocalFile, ModelConfig
from bargain_ray.config.schema import OFFSET, BlockSeeds, CellKey
from bargain_ray.core.display import ABSENT, show
from bargain_ray.core.provenance import CodeVersion
from bargain_ray.core.records import Served
from bargain_ray.core.unit import Unit
from bargain_ray.store.paths import CALLS_JOURNAL, JOURNAL, MANIFEST

SHOWN = 3
"""How many changed fields a refusal names before it gives only their count."""
NEW_FOLDER = "start a new sweep folder with run.dir=<new path>"


class ChangedConfig(RuntimeError):
    """The sweep folder cannot be resumed under the current config (it would mix results or rename units)."""


class Determinants(BaseModel):
    """The config as far as it names or determines units, in the config's own shape, so a difference is
    named by the path of the override that restores it (``grid.seed``, ``games.tickets.max_turns``).

    Runtime knobs are not here: ``run.*``, provider settings, and each model's ``limits`` and ``retry``.
    A condition's ``description`` is left out too: it is a label no model reads (our choice)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    grid: GridConfig
    provider: str
    """``default``, ``sim`` or ``local``: a rehearsal never resumes as a real run, nor the reverse."""
    games: dict[str, dict[str, Any]]  # free-form: game configs as written, typed by each family's schema
    conditions: dict[str, Condition]
    models: dict[str, ModelConfig]
    """Each model as this run calls it (``provider=sim|local`` reroutes every LLM)."""

    @field_serializer("conditions")
    def _conditions(self, conditions: dict[str, Condition]) -> dict[str, Any]:  # free-form: a serializer's JSON output
        return {k: c.model_dump(mode="json", exclude={"description"}) for k, c in conditions.items()}

    @field_serializer("models")
    def _models(self, models: dict[str, ModelConfig]) -> dict[str, Any]:  # free-form: a serializer's JSON output
        return {k: m.model_dump(mode="json", exclude=set(RUNTIME_KEYS)) for k, m in models.items()}


class Refigured(BaseModel):
    """Which code computed the figures of the table generation ``python -m bargain_ray.rescore`` published."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    generation: str
    """The table generation whose figures this code computed; once another generation is published (a resumed
    sweep writes its tables from the journal), the figures are the journal's again."""
    code: CodeVersion | None
    """The commit (and a hash of its uncommitted changes) of the code that recomputed them; None when it was not a
    git checkout."""
    at: str
    """When, UTC."""


class ServedReference(Served):
    """A model's reference for drift (``provider:model`` in ``Manifest.served``): what the sweep's first answer of
    it reported as served, and which call that was."""

    call_id: str
    answered_at: datetime | None = None


class DesignRecord(BaseModel):
    """One design a sweep folder was run with: what determined its units, when it was first run, what it added."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    at: str | None
    """When the folder was first run with it, UTC (None: a folder's first design from before designs were kept)."""
    grid: str
    config: Determinants
    components: dict[str, Any]  # free-form: fingerprint JSON, compared key by key
    git_commit: str | None = None
    git_diff: str | None = None
    """sha256 of the uncommitted changes the design was first run with (``CodeVersion.diff``; None: a clean tree)."""
    units: int | None = None
    """Units the design lays out (None where not recorded)."""
    added: int | None = None
    """Units no earlier design of the folder laid out (all of them for the first design)."""
    dropped: int | None = None
    """Units of earlier designs it leaves out: they stay in the journals, out of the tables."""
    changes: list[str] = []
    """What differs from the design before, one field a line (``grid.blocks 1 → 40``); empty for the first."""

    def cell_keys(self) -> frozenset[CellKey]:
        return frozenset(self.config.grid.cell_keys())

    def same_as(self, other: Determinants, components: dict[str, Any]) -> bool:  # free-form: fingerprint JSON
        """Whether this design determines the units ``other`` and ``components`` determine, field for field."""
        return (self.config.model_dump(mode="json") == other.model_dump(mode="json")
                and not differences(self.components, json.loads(json.dumps(components))))


class Manifest(BaseModel):
    """The sweep's creation date (part of every unit id), what determines its units, and provenance."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    grid: str
    """The grid's name, as readers of the folder (analysis, the dataset card) show it."""
    created: str
    """YYYYMMDD of the first run: unit ids carry it, so it is kept for the life of the folder."""
    block_seeds: BlockSeeds = OFFSET
    """How a grid without listed seeds gives each block its seed in this folder, for its life (a manifest without
    it was written before hashing: ``grid.seed + block``)."""
    config: Determinants
    components: dict[str, Any]  # free-form: fingerprint JSON, compared key by key
    """The fingerprint of every game and model (``design.fingerprint``, which names its parts: ``game_part``
    reads one): opaque JSON here, compared as a backstop for what the config fields cannot show (the text a
    model reads)."""
    git_commit: str | None = None
    """Provenance only, never compared: a code change that matters shows in ``components`` or the unit hashes."""
    git_diff: str | None = None
    """sha256 of the tracked files' uncommitted changes when the sweep started (``CodeVersion.diff``): the commit
    alone does not name code that differed from it. None: a clean tree (or a folder from before it was kept)."""
    refigured: Refigured | None = None
    """Set by ``rescore``: the code that recomputed every per-game and per-turn figure of its table generation
    (None: each game's figures are those its journal line holds, computed as it ended). Never compared."""
    local_conf: list[LocalFile] = []
    """The ``./conf`` files the folder's first run was composed from (path, digest, whether each took a packaged
    file's place). Provenance, never compared: what such a file changes that determines games (a config value, a
    word of a brief) is compared where it lands, in ``config`` and the text digests of ``components``, while one
    that changes only runtime knobs (a price, a limit) must not refuse a resume."""
    served: dict[str, ServedReference] = {}
    """``provider:model`` -> what the sweep's first answer of the model reported as served (model string,
    fingerprint, upstream provider): every later answer is compared to it, a change is drift
    (``execution.drift``). Recorded by the driver as the first answers come; never compared for resume."""
    designs: list[DesignRecord] = []
    """Every design the folder was run with, oldest first, the last the current one (``config``, ``components``,
    ``grid``); empty in a folder from before designs were kept, whose one design is ``config`` (``history``)."""

    def hand_edits(self) -> list[tuple[str, Any, Any]]:
        """(path, in the latest design, at the top) where the current design's copy at the top (``grid``, ``config``,
        ``components``) differs from the latest of ``designs``: the driver writes the two together, so a difference
        is an edit by hand, which readers of the top (the dataset card's seed, the report) would publish."""
        if not self.designs:
            return []
        latest = self.designs[-1]
        return differences({"grid": latest.grid, "config": latest.config.model_dump(mode="json"),
                            "components": latest.components},
                           {"grid": self.grid, "config": self.config.model_dump(mode="json"),
                            "components": self.components})

    def history(self) -> list[DesignRecord]:
        """The folder's designs, oldest first (a folder from before designs were kept has one: ``config``)."""
        return self.designs or [DesignRecord(at=None, grid=self.grid, config=self.config, components=self.components,
                                             git_commit=self.git_commit, git_diff=self.git_diff)]

    def left_out(self) -> Callable[[Unit], bool] | None:
        """Whether a journaled unit belongs to an earlier design and not to the current one (it stays in the
        journal, out of the tables and the dataset); None when the folder had one design, so nothing is left out."""
        *earlier, current = self.history()
        if not earlier:
            return None
        before = [(d.config.grid.blocks, d.cell_keys()) for d in earlier]
        blocks, keys = current.config.grid.blocks, current.cell_keys()

        def dropped(unit: Unit) -> bool:
            key = (unit.game, unit.condition, unit.pairing, unit.assignment, unit.first_speaker)
            held = unit.block <= blocks and key in keys
            return not held and any(unit.block <= b and key in k for b, k in before)

        return dropped

    def game_conditions(self) -> list[tuple[str, str]]:
        """(game, condition) of every game config of the sweep, in the grid's order, each once."""
        return list(dict.fromkeys((d.game, c) for d in self.config.grid.designs for c in d.conditions))

    def key_names(self) -> list[str]:
        """The key variables the sweep's models were configured to read (each model's ``api_key_env``)."""
        return sorted({m.api_key_env for m in self.config.models.values() if m.api_key_env})


class UnreadableManifest(ValueError):
    """A folder's manifest is not one this version writes (hand-made, cut short, or older than the check)."""


class EditedManifest(UnreadableManifest):
    """A folder's manifest says one thing at the top and another in the design its games were played with."""

    def __init__(self, target: Path, manifest: Manifest) -> None:
        edits = manifest.hand_edits()
        field, played, top = edits[0]
        more = f" (and {len(edits) - 1} more fields)" if len(edits) > 1 else ""
        super().__init__(
            f"{target} was edited by hand: {field} is {show(top)} at the top but {show(played)} in the design its "
            f"games were played with (designs.{len(manifest.designs) - 1}){more}; nothing was read. Set it back to "
            f"{show(played)} (or restore the file from a backup).")


def today() -> str:
    return datetime.now(UTC).strftime("%Y%m%d")


def read_manifest(path: Path) -> Manifest:
    """The manifest of the sweep folder ``path``, for readers (analysis, the dataset, the live view); a
    manifest this version cannot read is refused in one line (``UnreadableManifest``)."""
    target = path / MANIFEST
    try:
        manifest = Manifest.model_validate_json(target.read_bytes())
    except ValidationError:
        raise UnreadableManifest(
            f"{target} does not record what determines its games as this version writes it (grid seed, "
            "designs, games, models; folders before that check are not read): read it with the code that wrote it"
        ) from None
    if manifest.hand_edits():
        raise EditedManifest(target, manifest)
    return manifest


def open_manifest(path: Path, current: Manifest) -> Manifest:
    """Create the folder and write ``current``, or check the recorded manifest against it; returns the recorded one."""
    recorded = recorded_manifest(path)
    if recorded is None:
        path.mkdir(parents=True, exist_ok=True)
        write_manifest(path, current)
        return current
    refuse_changes(path, recorded, current)
    return recorded


def recorded_manifest(path: Path) -> Manifest | None:
    """The manifest of the sweep folder ``path`` for a resume, None for a folder not started yet.

    A journal without its manifest is refused, not rebuilt: the journal's records carry unit ids and
    hashes but not the config fields that gave them, so a rebuilt manifest could not name what changed,
    and a new one dated today would rename every unit (ids carry the creation date) and pay every call again.
    """
    target = path / MANIFEST
    if not target.exists():
        journals = [name for name in (JOURNAL, CALLS_JOURNAL) if (path / name).exists()]
        if journals:
            raise ChangedConfig(
                f"{path} holds {' and '.join(journals)} but no {MANIFEST}: its games cannot be checked against "
                f"this config, and a new manifest would rename every unit. Restore {target} (e.g. from a backup) "
                f"to resume, or {NEW_FOLDER}."
            )
        return None
    try:
        return read_manifest(path)
    except EditedManifest as exc:
        raise ChangedConfig(str(exc)) from None
    except UnreadableManifest:
        raise ChangedConfig(
            f"{target} is unreadable or does not record what determines its games (grid seed, designs, games, "
            f"models; folders before this check did not): it cannot be resumed safely. Finish it with the code "
            f"that started it, or {NEW_FOLDER}."
        ) from None


def refuse_changes(path: Path, recorded: Manifest, current: Manifest) -> None:
    """``ChangedConfig`` naming what ``current`` changes of any design the folder recorded (``changed_fields``)."""
    changes = changed_fields(recorded, current)
    if changes:
        raise ChangedConfig(refusal(path, changes))


def write_manifest(path: Path, manifest: Manifest) -> None:
    """Atomic and durable: a kill leaves the old manifest or the new one, never half of one."""
    target = path / MANIFEST
    tmp = target.with_suffix(".tmp")
    with tmp.open("w") as f:
        f.write(manifest.model_dump_json(indent=1))
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, target)


def changed_fields(recorded: Manifest, current: Manifest) -> list[tuple[str, Any, Any]]:
    """(path, recorded, current) of every determining field ``current`` changes of a design the folder recorded
    (the first such design's); what one side has and the other lacks is growth, not a change. The fingerprint is
    compared only when the config fields agree, so one change is not named twice (once as a field, once as a
    digest)."""
    for design in recorded.history():
        changes = shared_differences(design.config, current.config, recorded.block_seeds) or [
            c for k in design.components.keys() & current.components.keys()
            for c in differences(design.components[k], current.components[k], f"components.{k}")]
        if changes:
            return changes
    return []


def shared_differences(old: Determinants, new: Determinants, rule: BlockSeeds) -> list[tuple[str, Any, Any]]:
    """What ``new`` changes of ``old`` where both have it: the provider, the grid seed, the seed of each block
    both play (by the folder's ``rule`` where a grid lists none), and every field of each game, condition and model both name. The grid's names (``name``,
    ``experiment``, ``prefix``), its number of blocks and its designs may differ: the units they name keep their
    ids (``design.units``), and a cell both lay out is compared by ``design.units.renamed``."""
    a, b = old.model_dump(mode="json"), new.model_dump(mode="json")
    out = differences(a["provider"], b["provider"], "provider")
    out += differences(a["grid"]["seed"], b["grid"]["seed"], "grid.seed")
    if old.grid.seeds is not None or new.grid.seeds is not None:
        out += [(f"grid.seeds.{block - 1}", old.grid.block_seed(block, rule), new.grid.block_seed(block, rule))
                for block in range(1, min(old.grid.blocks, new.grid.blocks) + 1)
                if old.grid.block_seed(block, rule) != new.grid.block_seed(block, rule)]
    for field in ("games", "conditions", "models"):
        out += [c for k in a[field] if k in b[field] for c in differences(a[field][k], b[field][k], f"{field}.{k}")]
    return out


def growth(old: Determinants, new: Determinants) -> list[str]:
    """What ``new`` differs from ``old`` in, one field a line as a refusal names it (``grid.blocks 1 → 40``), for
    the design history."""
    return [f"{p} {show(a)} → {show(b)}"
            for p, a, b in differences(old.model_dump(mode="json"), new.model_dump(mode="json"))]


def differences(old: Any, new: Any, path: str = "") -> list[tuple[str, Any, Any]]:
    """Every leaf where two JSON values differ, as (dotted path, old, new), in the order of ``old``'s keys.

    Lists of equal length are compared item by item (``grid.designs.0.pairings``); otherwise a list is one
    value. Hand-written: twelve lines of recursion, where a diff library's paths would need rewriting."""
    if isinstance(old, dict) and isinstance(new, dict):
        keys = [*old, *(k for k in new if k not in old)]
        return [c for k in keys for c in differences(old.get(k, ABSENT), new.get(k, ABSENT), _join(path, k))]
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        return [c for i, (a, b) in enumerate(zip(old, new, strict=True)) for c in differences(a, b, _join(path, i))]
    return [] if old == new and type(old) is type(new) else [(path, old, new)]


def _join(path: str, key: object) -> str:
    return f"{path}.{key}" if path else str(key)


def refusal(path: Path, changes: list[tuple[str, Any, Any]]) -> str:
    """One line: the first few changed fields with both values, how many changed, and what to do."""
    named = "; ".join(f"{p} {show(a)} → {show(b)}" for p, a, b in changes[:SHOWN])
    more = f" (and {len(changes) - SHOWN} more: {len(changes)} fields differ)" if len(changes) > SHOWN else ""
    return (
        f"{path} holds games of another config: {named}{more}. Results are never mixed: restore the config "
        f"to resume, or {NEW_FOLDER}."
    )

