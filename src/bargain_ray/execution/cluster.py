"""Joining or starting Ray: once per process, with no API key in any process Ray starts."""

from __future__ import annotations

import logging
import os
from collections.abc import Collection, Iterator
from contextlib import contextmanager

import ray

from bargain_ray.core.secrets import is_key


@contextmanager
def without_keys(names: Collection[str] = ()) -> Iterator[None]:
    """``os.environ`` without ``names`` and every ``*_API_KEY`` variable for the length of the block, then restored.

    A process started inside the block (Ray's GCS, raylet, dashboard agents and, through the raylet, every
    worker) inherits no key; this process keeps its keys, which the driver hands to the actors that call
    providers as actor arguments (``providers.key_env_vars``).
    """
    taken = {n: os.environ.pop(n) for n in list(os.environ) if is_key(n, names)}
    try:
        yield
    finally:
        os.environ.update(taken)


def ensure_ray(keys: Collection[str] = ()) -> None:
    """Join ``RAY_ADDRESS`` if set, else start (or reuse) a local instance whose processes carry no API key.

    ``keys`` names key variables beyond the ``*_API_KEY`` ones (a model's own ``api_key_env``); this is the one
    place Ray is started, so the one place keys are kept out of its processes.
    """
    if not ray.is_initialized():
        with without_keys(keys):
            ray.init(address=os.environ.get("RAY_ADDRESS"), log_to_driver=False, include_dashboard=False,
                     logging_level=logging.WARNING)
