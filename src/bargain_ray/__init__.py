"""bargain_ray: run negotiation experiments between language models on Ray.

The public API, imported on first use (so ``import bargain_ray.games`` never starts Ray's import)::

    config = bargain_ray.load_config("c3_smoke", ["provider=sim"])  # Hydra overrides, checked as the CLI does
    bargain_ray.run_sweep(config)                                 # run or resume; an exit code
    sweep = bargain_ray.read_sweep("outputs/c3_smoke")            # manifest, records, tables
    bargain_ray.build_report("outputs/c3_smoke")                  # dataset/ and report.html
    bargain_ray.head_to_head("outputs/c3_smoke")                  # model A - model B, first-mover and seat effects
    bargain_ray.replay_transcript(bargain_ray.ReplayFile(game="tickets", replies=[...]))  # a transcript's outcome
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

__version__ = "0.1.0"

_API = {
    "load_config": "bargain_ray.design.resolved",
    "ResolvedSweep": "bargain_ray.design.resolved",
    "SweepConfig": "bargain_ray.config.schema",
    "read_sweep": "bargain_ray.analysis.sweep",
    "Sweep": "bargain_ray.analysis.sweep",
    "build_report": "bargain_ray.analysis.report",
    "head_to_head": "bargain_ray.analysis.head_to_head",
    "replay_transcript": "bargain_ray.play.rescore",
    "ReplayFile": "bargain_ray.play.rescore",
}
__all__ = [*_API, "__version__", "run_sweep"]


def run_sweep(sweep: Any, started: float | None = None) -> int:
    """Run or resume a sweep as ``python -m bargain_ray`` does (its exit code): the runner plays it, then, with
    ``run.report``, the command builds its report (``execution`` never imports ``analysis``)."""
    from bargain_ray.execution import sweep as runner

    return runner.run_sweep(sweep, started, _build_report)


def _build_report(path: Path) -> Path:
    """``analysis.report.build_report``, imported once the games are played (polars and the report code are
    off the start-up's path)."""
    from bargain_ray.analysis.report import build_report

    return build_report(path)


def __getattr__(name: str) -> Any:
    if name in _API:
        return getattr(importlib.import_module(_API[name]), name)
    raise AttributeError(f"module 'bargain_ray' has no attribute {name!r}")
