"""Block seeds: hashed from (grid seed, block) for a new folder, so sweeps with nearby grid seeds share no draw; a
folder written before keeps the seeds it played, as its manifest says."""

from __future__ import annotations

import asyncio
import json

from bargain_ray.config.schema import HASHED, HASHED_FROM, OFFSET
from bargain_ray.design import load_config, units
from bargain_ray.execution.plan import describe, plan
from bargain_ray.execution.worker import GameRunner
from bargain_ray.store import GameJournal, read_manifest
from bargain_ray.store.manifest import write_manifest

NEW, OLD = HASHED_FROM, "20261201"


def draws(grid_seed: int, created: str) -> set[tuple[int, int]]:
    """(seller cost, buyer value) of every game of a 10-block power_pilot sweep with ``grid_seed``."""
    sweep = load_config("power_pilot", [f"grid.seed={grid_seed}", "grid.blocks=10"])
    out = set()
    for u in units(sweep, created):
        state = sweep.game(u.game, u.condition).start(u.seed, u.first_speaker)
        out.add((state.seller_cost, state.buyer_value))
    return out


def test_two_sweeps_with_nearby_grid_seeds_share_no_draw():
    first, second = draws(7, NEW), draws(8, NEW)
    assert len(first) == len(second) == 10  # common random numbers: one draw a block, every cell of it alike
    assert not first & second
    assert len(draws(7, OLD) & draws(8, OLD)) == 9  # the rule before: grid.seed + block, blocks 2..10 of 7 = 1..9 of 8


def test_a_new_folder_records_hashed_seeds_and_plays_them(tmp_path):
    sweep = load_config("demo", [f"run.dir={tmp_path}"])
    planned = plan(sweep, tmp_path)
    manifest = read_manifest(tmp_path)
    assert manifest.block_seeds == HASHED and manifest.created >= HASHED_FROM
    assert {u.seed for u in planned.todo()} == {sweep.grid.block_seed(b, HASHED) for b in (1, 2, 3)}
    assert sweep.grid.block_seed(1, HASHED) != sweep.grid.seed + 1


def test_a_folder_written_before_hashing_keeps_its_seeds_whatever_its_date(tmp_path):
    """A folder the previous code created (its manifest has no rule: grid.seed + block), even on a date from which new
    folders hash, resumes with the seeds it played: every finished unit kept, nothing refused."""
    sweep = load_config("demo", [f"run.dir={tmp_path}"])
    tmp_path.mkdir(exist_ok=True)
    written = json.loads(describe(sweep, NEW).model_dump_json())
    del written["block_seeds"]
    (tmp_path / "manifest.json").write_text(json.dumps(written))
    runner, journal = GameRunner(sweep.model_dump(mode="json")), GameJournal(tmp_path)
    old = list(units(sweep, NEW, seeds=OFFSET))
    journal.append_many([asyncio.run(runner.play(u)) for u in old[:4]])
    journal.close()
    assert read_manifest(tmp_path).block_seeds == OFFSET
    planned = plan(sweep, tmp_path)
    assert len(planned.done) == 4 and planned.count == len(old) - 4
    assert {u.seed for u in planned.todo()} <= {sweep.grid.seed + b for b in (1, 2, 3)}
    write_manifest(tmp_path, read_manifest(tmp_path))  # read back and written by this code: still the old rule
    assert json.loads((tmp_path / "manifest.json").read_text())["block_seeds"] == OFFSET
