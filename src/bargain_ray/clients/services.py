"""Local servers a provider needs for the length of a sweep (simulated provider, local model)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from bargain_ray.config import SweepConfig


@contextmanager
def provider_service(sweep: SweepConfig) -> Iterator[SweepConfig]:
    """Start what ``sweep.provider`` needs and yield the sweep pointed at it."""
    yield sweep
