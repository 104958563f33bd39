"""Execution on Ray: the only package that imports Ray (besides the clients' cluster-wide limiter).

``sweep`` runs one sweep end to end (its report is the command's); ``plan`` reads the design and the folder
once; ``driver`` is the loop that submits tasks (a few units each) and journals results;
``pool`` holds the worker actors; ``worker`` is the actor that plays games;
``calljournal`` journals and replays paid replies (``journal_actor`` is the actor that writes them);
``budget`` caps what they cost; ``batcher`` gathers requests into provider batches (``run.batch_api``);
``signals`` turns SIGINT/SIGTERM into a stop the loop reads; ``progress`` keeps totals,
the summary and the exit code; ``cluster`` decides which Ray a run uses and watches it.

``run_sweep`` and ``sweep_dir`` are imported on first use, so the CLI takes signals (``signals``) before
Ray, polars or a client is imported.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["run_sweep", "sweep_dir"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return getattr(importlib.import_module("bargain_ray.execution.sweep"), name)
    raise AttributeError(f"module 'bargain_ray.execution' has no attribute {name!r}")
