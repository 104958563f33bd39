"""Analysis of a sweep folder, read through the store (it never writes the tables): per-game metrics, cells with t
intervals over seeds (``analysis.intervals``), the head-to-head answer, operational figures, the dataset export and
the HTML report.

Families plug in through the game contract (``games.base``): their figures are computed from each
game's typed record (``Game.game_metrics`` and ``turn_metrics``) and tabled; ``RESULTS`` (``games.kit.results.Results``)
says which of them the report leads with, which are figures of each role, and how long the family's deals took;
what analysis reads of a family is declared on its ``Game`` class, never looked up by name. Analysis names no family.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bargain_ray.analysis.report import build_report
    from bargain_ray.analysis.sweep import Sweep, read_sweep

__all__ = ["Sweep", "build_report", "read_sweep"]


def __getattr__(name: str) -> Any:
    """The package's names, imported on first use: importing one module of the package (``analysis.commands``, or
    ``python -m bargain_ray.analysis.provenance``) does not import the report and everything it reads."""
    found: Any
    if name == "build_report":
        from bargain_ray.analysis.report import build_report as found
    elif name == "read_sweep":
        from bargain_ray.analysis.sweep import read_sweep as found
    elif name == "Sweep":
        from bargain_ray.analysis.sweep import Sweep as found
    else:
        raise AttributeError(f"module 'bargain_ray.analysis' has no attribute {name!r}")
    return found
