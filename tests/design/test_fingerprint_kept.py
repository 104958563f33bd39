"""Every shipped grid keeps the fingerprint and the unit hashes it had before the settings and provenance of
issue 19 (commit 7555244): its sweep folders resume under this code."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bargain_ray.config import choices, compose_dict
from bargain_ray.core.hashing import digest
from bargain_ray.design import resolve
from bargain_ray.design.units import units

KEPT = json.loads((Path(__file__).parents[1] / "data" / "fingerprints_7555244.json").read_text())
"""Per grid and provider: the digest of each fingerprint component and of every unit hash (created 20260101),
as the code of commit 7555244 computed them."""


@pytest.mark.parametrize("key", sorted(KEPT))
def test_a_shipped_grid_has_the_fingerprint_and_unit_hashes_it_had(key):
    grid, provider = key.split(" provider=")
    sweep = resolve(compose_dict("config", [f"+grid={grid}", f"provider={provider}"]))
    assert {k: digest(v) for k, v in sweep.components.items()} == KEPT[key]["components"]
    assert digest([u.hash for u in units(sweep, "20260101")]) == KEPT[key]["units"]


def test_every_shipped_grid_is_kept():
    """A grid added later is not in the golden: only grids that existed then are compared."""
    assert {k.split(" provider=")[0] for k in KEPT} <= set(choices("grid"))
