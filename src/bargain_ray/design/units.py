"""The design grid expanded into units: one unit is one game.

A sweep folder may grow (``execution.plan``): its designs, oldest first, lay out each block together. A block's
cells are placed design by design: the first design that plays the block shuffles all of its cells (seeded by the
grid seed and the block, as a folder of one design always was), and each later design appends, in its own seeded
shuffle, only the cells no earlier design placed there. So a cell keeps its position, and its unit its id and hash,
whatever is added later; a new pairing or condition never reshuffles a block already played, and more blocks are
laid out as a fresh sweep of the larger design would lay them out. A unit's id is named by the folder's first
design (prefix, experiment) and its creation date: a name, once given, never changes.

A block's seed is the grid's listed one, else derived from the grid seed by the folder's rule
(``config.schema.BlockSeeds``): hashed, so sweeps whose grid seeds are close share no draw, for a folder created
from ``HASHED_FROM`` on; ``grid.seed + block`` for one written before (its manifest records which).
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bargain_ray.config import Assignment, Design, GridConfig
from bargain_ray.config.schema import BlockSeeds, CellKey, block_seeds_of
from bargain_ray.core.hashing import digest
from bargain_ray.core.unit import Unit
from bargain_ray.design.fingerprint import game_key, model_part

if TYPE_CHECKING:
    from bargain_ray.design.resolved import ResolvedSweep


@dataclass(frozen=True)
class Cell:
    """One cell of a design: a condition, a pairing, an assignment and a first speaker of its game."""

    index: int
    """The design's place in its grid's ``designs`` (to name a field of it)."""
    design: Design
    condition: str
    pairing: str
    assignment: Assignment
    speaker: str | None

    @property
    def key(self) -> CellKey:
        return (self.design.game, self.condition, self.pairing, self.assignment.id, self.speaker)

    @property
    def label(self) -> str:
        """The cell a game is tabled under (``Design.cell``)."""
        return self.design.cell(self.condition, self.pairing, self.assignment, self.speaker)

    @property
    def suffix(self) -> str:
        """The unit id's ending for a design that varies who speaks first (``-fseller``)."""
        return f"-f{self.speaker}" if self.design.speaker_varied(self.assignment) and self.speaker else ""


def cells(grid: GridConfig) -> list[Cell]:
    """Every cell of the grid, in design order (the order ``Design.cell_keys`` gives)."""
    return [Cell(i, d, cond, pairing, a, speaker) for i, d in enumerate(grid.designs) for cond in d.conditions
            for pairing in d.pairings for a in d.assignments for speaker in d.speakers_of(a)]


class Layout:
    """Where each cell sits in each block of a sweep folder whose designs, oldest first, are ``grids``."""

    def __init__(self, grids: Sequence[GridConfig]) -> None:
        self.grids = list(grids)
        self._cells = [cells(g) for g in self.grids]

    def block(self, block: int) -> list[tuple[Cell, int]]:
        """(cell, the design that placed it) of every position of ``block``, in position order: each design
        appends, shuffled, the cells of the block no earlier design placed; the first to play the block shuffles
        as a folder of one design always did."""
        placed: dict[CellKey, tuple[Cell, int]] = {}
        for generation, (grid, laid) in enumerate(zip(self.grids, self._cells, strict=True)):
            if block > grid.blocks:
                continue
            new = [c for c in laid if c.key not in placed]
            random.Random(f"{grid.seed}-{block}" if not placed else f"{grid.seed}-{block}-{generation}").shuffle(new)
            placed |= {c.key: (c, generation) for c in new}
        return list(placed.values())


@dataclass(frozen=True)
class Naming:
    """What every unit id of a sweep folder carries: its first design's prefix and experiment, its creation date."""

    prefix: str
    experiment: str
    created: str

    @classmethod
    def of(cls, grids: Sequence[GridConfig], created: str) -> Naming:
        return cls(grids[0].prefix, grids[0].experiment, created)

    def unit_id(self, block: int, position: int, cell: Cell) -> str:
        return (f"{self.prefix}-{self.experiment}-{self.created}-b{block:02d}-p{position:02d}"
                f"-{cell.pairing.lower()}-a{cell.assignment.id}{cell.suffix}")


def laid_out(grids: Sequence[GridConfig], created: str) -> dict[str, int]:
    """unit id -> the design (index into ``grids``) that placed it, for every unit any of ``grids`` lays out."""
    naming, layout = Naming.of(grids, created), Layout(grids)
    return {naming.unit_id(block, position, cell): generation
            for block in range(1, max(g.blocks for g in grids) + 1)
            for position, (cell, generation) in enumerate(layout.block(block), start=1)}


def renamed(earlier: Sequence[GridConfig], grid: GridConfig) -> list[tuple[str, Any, Any]]:
    """(field, earlier value, current value) for each cell of ``grid`` an earlier design also lays out whose
    assignment, label or id ending differs there: the units played under it would be named, tabled or played
    otherwise. Field paths are the current grid's."""
    current = {c.key: c for c in cells(grid)}
    out: dict[str, tuple[Any, Any]] = {}
    for old in (c for g in earlier for c in cells(g)):
        new = current.get(old.key)
        if new is None:
            continue
        path = f"grid.designs.{new.index}"
        if old.assignment.roles != new.assignment.roles:
            j = new.design.assignments.index(new.assignment)
            out.setdefault(f"{path}.assignments.{j}.roles", (old.assignment.roles, new.assignment.roles))
        elif old.suffix != new.suffix:
            out.setdefault(f"{path}.first_speakers", (old.design.first_speakers, new.design.first_speakers))
        elif old.label != new.label:
            plain = new.design.model_copy(update={"cells": None}).cell(new.condition, new.pairing, new.assignment,
                                                                          new.speaker)
            out.setdefault(f"{path}.cells.{plain}", (old.label, new.label))
    return [(path, a, b) for path, (a, b) in out.items()]


def units(sweep: ResolvedSweep, created: str, earlier: Sequence[GridConfig] = (),
          seeds: BlockSeeds | None = None) -> Iterator[Unit]:
    """Every unit of the grid, block by block, each block in position order; ``earlier`` are the designs the
    folder had before this one (oldest first), which placed the cells they share with it; ``seeds`` the folder's
    rule for block seeds, as its manifest records it (None: the rule of a folder created on ``created``).

    A unit's hash covers what determines its game (game config and texts, each role's model, seed, first
    speaker) and the labels its result is tabled under (game, cell), so a result is never kept under another
    cell's labels, e.g. two assignments of one model pairing (``BB`` a1 and a2), which play alike."""
    grid = sweep.grid
    grids = [*earlier, grid]
    naming, layout = Naming.of(grids, created), Layout(grids)
    parts = {name: digest(part) for name, part in sweep.components.items()}
    model_parts = {letter: parts[model_part(letter, model)[0]] for letter, model in sweep.models.items()}
    current = {c.key: c for c in cells(grid)}
    rule = seeds or block_seeds_of(created)
    for block in range(1, grid.blocks + 1):
        seed = grid.block_seed(block, rule)
        for position, (placed, _) in enumerate(layout.block(block), start=1):
            if (cell := current.get(placed.key)) is not None:
                yield _unit(sweep, naming, block, position, seed, cell, parts, model_parts)


def _unit(sweep: ResolvedSweep, naming: Naming, block: int, position: int, seed: int, cell: Cell,
          parts: dict[str, str], model_parts: dict[str, str]) -> Unit:
    d, a, speaker = cell.design, cell.assignment, cell.speaker
    key = game_key(d.game, cell.condition)
    agent_of_role = dict(a.roles)
    letters = {role: cell.pairing[ord(agent) - ord("A")] for role, agent in agent_of_role.items()}
    label = cell.label
    determined = {
        "labels": [d.game, label],
        "game": parts[key],
        "models": {role: model_parts[letter] for role, letter in letters.items()},
        "seed": seed,
        "first_speaker": speaker,
    }
    return Unit(
        unit_id=naming.unit_id(block, position, cell),
        experiment=naming.experiment,
        game=d.game,
        family=sweep.game_configs[key].family,
        block=block,
        position=position,
        condition=cell.condition,
        pairing=cell.pairing,
        assignment=a.id,
        cell=label,
        seed=seed,
        first_speaker=speaker,
        models_by_role={role: sweep.models[letter].name for role, letter in letters.items()},
        letter_of_role=letters,
        agent_of_role=agent_of_role,
        hash=digest(determined),
    )
