"""The design grid expanded into units: one unit is one game."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import TYPE_CHECKING

from bargain_ray.core.hashing import digest
from bargain_ray.core.unit import Unit
from bargain_ray.design.fingerprint import game_key, model_part

if TYPE_CHECKING:
    from bargain_ray.design.resolved import ResolvedSweep


def units(sweep: ResolvedSweep, created: str) -> Iterator[Unit]:
    """Every unit of the grid, block by block, each block in a seeded shuffled order.

    A unit's hash covers what determines its game (game config and texts, each role's model, seed, first
    speaker) and the labels its result is tabled under (game, cell), so a result is never kept under another
    cell's labels, e.g. two assignments of one model pairing (``BB`` a1 and a2), which play alike."""
    grid = sweep.grid
    parts = {name: digest(part) for name, part in sweep.components.items()}
    model_parts = {letter: parts[model_part(letter, model)[0]] for letter, model in sweep.models.items()}
    for block in range(1, grid.blocks + 1):
        cells = []
        for d in grid.designs:
            for cond in d.conditions:
                key = game_key(d.game, cond)
                for pairing in d.pairings:
                    for a in d.assignments:
                        for speaker in d.speakers_of(a):
                            cells.append((d, cond, key, pairing, a, speaker))
        random.Random(f"{grid.seed}-{block}").shuffle(cells)
        seed = grid.block_seed(block)
        for position, (d, cond, key, pairing, a, speaker) in enumerate(cells, start=1):
            agent_of_role = dict(a.roles)
            letters = {role: pairing[ord(agent) - ord("A")] for role, agent in agent_of_role.items()}
            models = {role: sweep.models[letter].name for role, letter in letters.items()}
            suffix = f"-f{speaker}" if d.speaker_varied(a) and speaker else ""
            cell = d.cell(cond, pairing, a, speaker)
            unit_id = (
                f"{grid.prefix}-{grid.experiment}-{created}-b{block:02d}-p{position:02d}"
                f"-{pairing.lower()}-a{a.id}{suffix}"
            )
            determined = {
                "labels": [d.game, cell],
                "game": parts[key],
                "models": {role: model_parts[letter] for role, letter in letters.items()},
                "seed": seed,
                "first_speaker": speaker,
            }
            yield Unit(
                unit_id=unit_id,
                experiment=grid.experiment,
                game=d.game,
                family=sweep.game_configs[key].family,
                block=block,
                position=position,
                condition=cond,
                pairing=pairing,
                assignment=a.id,
                cell=cell,
                seed=seed,
                first_speaker=speaker,
                models_by_role=models,
                model_of_role=letters,
                agent_of_role=agent_of_role,
                hash=digest(determined),
            )
