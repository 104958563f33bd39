"""The Ray actor that plays a judging run's reads: a ``GameRunner`` whose games start from a finished transcript.

Each read is the judged game's observer turn (``design.judging``), played by the shared loop with the reader as its
observer and the same ledger as any call: the call journal replays what was paid, the budget reserves before a call
is sent, the batcher takes what goes through a batch API. So a judging run resumes and pays each read once, as a
sweep does.
"""

from __future__ import annotations

from typing import Any

import ray

from bargain_ray.core.unit import Unit
from bargain_ray.design.judging import JudgingSpec
from bargain_ray.execution.worker import GameRunner
from bargain_ray.games import Game
from bargain_ray.games.base import GameState


class ReadRunner(GameRunner):
    """Holds a judging run's reads and the games they read; a read's unit id names its read."""

    def bind(self, spec: dict[str, Any], journal: Any = None, keys: dict[str, str] | None = None,  # the JudgingSpec's JSON dump as sent, validated on the next line
             budget: Any = None, seats: Any = None) -> None:
        self.spec = JudgingSpec.model_validate(spec)
        self.take(self.spec.sweep, journal, keys, budget, seats)

    def start(self, unit: Unit) -> tuple[Game, GameState | None]:
        """The read's game (its config as the read shows it) and the judged game after its last message."""
        return self.spec.reading(unit.unit_id)


RemoteReadRunner = ray.remote(num_cpus=0)(ReadRunner)
