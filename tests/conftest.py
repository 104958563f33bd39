"""Shared fixtures: one local Ray instance for the whole session."""

from __future__ import annotations

import os

import pytest
import ray

from bargain_ray.execution.cluster import without_keys


@pytest.fixture(scope="session")
def ray_session():
    """Start Ray once per session; subprocess sweeps join it through RAY_ADDRESS."""
    if not ray.is_initialized():
        with without_keys():  # a developer's real keys never reach the test cluster's processes
            ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    address = ray.get_runtime_context().gcs_address
    yield address
    ray.shutdown()


@pytest.fixture
def sweep_env(ray_session: str) -> dict[str, str]:
    """Environment for a ``python -m bargain_ray`` subprocess that joins the session's Ray."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["RAY_ADDRESS"] = ray_session
    env["PYTHONUNBUFFERED"] = "1"
    return env
