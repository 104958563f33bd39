"""What a sweep will cost before it runs, and when to stop spending."""

from __future__ import annotations

from collections import Counter

from bargain_ray.config import SweepConfig
from bargain_ray.design import Unit


def estimate(sweep: SweepConfig, todo: list[Unit]) -> str:
    """The dry-run plan: units per cell and per model."""
    per_model: Counter[str] = Counter()
    for unit in todo:
        for model in unit.models_by_role.values():
            per_model[model] += 1
    lines = [f"  {model}: plays a role in {n} games" for model, n in sorted(per_model.items())]
    return "\n".join(["plan (nothing is spent in a dry run):", *lines])
