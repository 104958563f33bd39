"""bargain_ray: run negotiation experiments between language models on Ray.

The public API, imported on first use (so ``import bargain_ray.games`` never starts Ray's import)::

    config = bargain_ray.load_config("c3_smoke", ["provider=sim"])  # Hydra overrides, checked as the CLI does
    bargain_ray.run_sweep(config)                                 # run or resume; an exit code
    sweep = bargain_ray.read_sweep("outputs/c3_smoke")            # manifest, records, tables
    bargain_ray.build_report("outputs/c3_smoke")                  # dataset/ and report.html
    bargain_ray.replay_transcript(bargain_ray.ReplayFile(game="tickets", replies=[...]))  # a transcript's outcome
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_API = {
    "load_config": "bargain_ray.design.resolved",
    "ResolvedSweep": "bargain_ray.design.resolved",
    "SweepConfig": "bargain_ray.config.schema",
    "run_sweep": "bargain_ray.execution.sweep",
    "read_sweep": "bargain_ray.analysis.sweep",
    "Sweep": "bargain_ray.analysis.sweep",
    "build_report": "bargain_ray.analysis.report",
    "replay_transcript": "bargain_ray.play.rescore",
    "ReplayFile": "bargain_ray.play.rescore",
}
__all__ = [*_API, "__version__"]


def __getattr__(name: str) -> Any:
    if name in _API:
        return getattr(importlib.import_module(_API[name]), name)
    raise AttributeError(f"module 'bargain_ray' has no attribute {name!r}")
