"""Analysis of a sweep folder, read through the store (it never writes the tables): per-game metrics,
cells with seed-clustered bootstrap CIs, operational figures, the dataset export and the HTML report.

Families plug in through their ``metrics`` module: ``per_game(record)`` (and optionally ``per_turn(record)``) give
the family's columns, computed when a game ends; ``RESULTS`` (``games.kit.results.Results``) says which of them the
report leads with, which are figures of each role, and how long the family's deals took. Analysis names no family.
"""

from bargain_ray.analysis.report import build_report
from bargain_ray.analysis.sweep import Sweep, read_sweep

__all__ = ["Sweep", "build_report", "read_sweep"]
