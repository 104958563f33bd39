"""The design grid: unit ids, order, seeds and the hash that guards resume."""

from __future__ import annotations

from collections import Counter

from bargain_ray.design import ResolvedSweep, load_config, units


def sweep(grid: str, *overrides: str) -> ResolvedSweep:
    return load_config(grid, overrides)


def test_c3_full_crosses_pairings_assignments_blocks_and_first_speakers():
    all_units = list(units(sweep("c3_full"), "20261027"))
    assert len(all_units) == 4 * 4 * 40
    assert len({u.unit_id for u in all_units}) == len(all_units)
    cells = Counter((u.pairing, u.assignment, u.first_speaker) for u in all_units)
    assert len(cells) == 16 and set(cells.values()) == {40}
    assert Counter(u.first_speaker for u in all_units) == {"buyer": 320, "seller": 320}
    a3 = next(u for u in all_units if u.assignment == 3)
    assert a3.agent_of_role == {"buyer": "B", "seller": "A"} and a3.first_speaker == "seller"


def test_unit_ids_follow_seed_001_and_are_stable():
    first = list(units(sweep("c3_full"), "20261027"))
    again = list(units(sweep("c3_full"), "20261027"))
    assert [u.unit_id for u in first] == [u.unit_id for u in again]
    assert [u.hash for u in first] == [u.hash for u in again]
    unit = next(u for u in first if u.block == 4 and u.position == 4)
    assert unit.unit_id == f"negotiation-c3rep40-20261027-b04-p04-{unit.pairing.lower()}-a{unit.assignment}"
    assert unit.cell == f"C3|{unit.pairing}|a{unit.assignment}"
    assert unit.models_by_role["buyer"] in {"claude-opus-5-5", "claude-haiku-5-5"}


def test_each_block_is_shuffled_from_the_grid_seed():
    a = [u.cell for u in units(sweep("c3_full"), "d") if u.block == 1]
    b = [u.cell for u in units(sweep("c3_full"), "d") if u.block == 2]
    c = [u.cell for u in units(sweep("c3_full", "grid.seed=1"), "d") if u.block == 1]
    assert sorted(a) == sorted(b) and a != b and a != c
    assert [u.position for u in units(sweep("c3_full"), "d") if u.block == 1] == list(range(1, 17))


def test_seed_is_shared_by_a_block_and_hash_ignores_runtime_knobs():
    base = list(units(sweep("demo"), "d"))
    assert len({u.seed for u in base if u.block == 1}) == 1
    knobs = list(units(sweep("demo", "run.workers=7", "run.max_in_flight=3"), "d"))
    assert [u.hash for u in base] == [u.hash for u in knobs]
    changed = list(units(sweep("demo", "games.tickets.max_turns=10"), "d"))
    assert all(a.hash != b.hash for a, b in zip(base, changed, strict=True))


def test_c3_smoke_is_one_block_of_the_same_design():
    smoke = list(units(sweep("c3_smoke"), "d"))
    assert len(smoke) == 16 and {u.block for u in smoke} == {1}


def test_every_unit_of_a_grid_has_its_own_hash():
    """Two assignments of one pairing (BB a1, a2) play alike; the hash still tells their cells apart,
    so a result is never kept under another cell's labels."""
    demo = list(units(sweep("demo"), "d"))
    assert len({u.hash for u in demo}) == len(demo)
    c3 = list(units(sweep("c3_full"), "d"))
    assert len({u.hash for u in c3}) == len(c3)


def test_the_unit_hash_covers_the_seed_and_each_roles_model():
    def hashes(*overrides):
        return {(u.block, u.cell): u.hash for u in units(sweep("c3_smoke", *overrides), "d")}

    base = hashes()
    reseeded = hashes("grid.seed=8")
    assert base.keys() == reseeded.keys() and all(base[k] != reseeded[k] for k in base)
    effort = hashes("models.O.params.output_config.effort=high")
    assert all((effort[k] == base[k]) == (k[1].split("|")[1] == "HH") for k in base)  # only games O plays
