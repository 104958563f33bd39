"""Joining or starting Ray: once per process."""

from __future__ import annotations

import os

import ray


def ensure_ray() -> None:
    """Join ``RAY_ADDRESS`` if set, else start (or reuse) a local instance."""
    if not ray.is_initialized():
        ray.init(address=os.environ.get("RAY_ADDRESS"), log_to_driver=False, include_dashboard=False)
