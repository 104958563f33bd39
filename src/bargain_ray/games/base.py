"""What every game family provides to the shared game loop.

A family is an engine (pure rules), a prompt module (wording), and a metrics
module (the outcome record). The loop, the agents, the runner and the store
only ever see this interface, so a new family never changes them.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import ModuleType
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict

from bargain_ray.core.prompt import Prompt
from bargain_ray.core.records import Scalar
from bargain_ray.core.status import Ended


class UtilitySpace(BaseModel):
    """A two-party agreement space in utility points, as a plot draws it (first role on x)."""

    model_config = ConfigDict(frozen=True)

    roles: tuple[str, str]
    frontier: list[tuple[float, float]]
    disagreement: tuple[float, float]
    nash: tuple[float, float] | None
    max_welfare: list[tuple[float, float]]
    ranges: tuple[tuple[float, float], tuple[float, float]]


DEFAULT_HEADLINE = ("efficiency", "efficiency_all_assigned", "joint_gain", "rounds_to_agreement", "dist_pareto",
                    "dist_nash")
"""Headline metrics of a family that names none of its own (those it has are shown)."""


class RuleError(ValueError):
    """A reply broke a rule; ``rule`` names it, the message is what the model sees."""

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(message)
        self.rule = rule


def opening_role(roles: Sequence[str], given: str | None, default: str, game: str, what: str = "role") -> str:
    """Who speaks first: the unit's first speaker, else the game's default; never an unknown role."""
    speaker = given or default
    if speaker not in roles:
        raise ValueError(f"first speaker {speaker!r} is not a {what} of {game}: {', '.join(roles)}")
    return speaker


class Game:
    """A game family bound to one config; every method is pure. The loop knows games only by this.

    It delegates to the family's modules by one convention:

    ``engine``: ``start(config, seed, first_speaker)``, ``to_move(config, state)``,
    ``parse(config, state, role, reply)``, ``apply(config, state, role, action)``,
    ``exhausted(config, state, role)``; ``prompts``: ``prompt(config, state, role)``,
    ``repair_message(config, state, role, error)``; ``metrics``: ``outcome(config, state)``.
    States carry ``ended``. A family adds only ``turn_fields``.
    """

    family: ClassVar[str]
    Config: ClassVar[type[BaseModel]]
    engine: ClassVar[ModuleType]
    prompts: ClassVar[ModuleType]
    metrics: ClassVar[ModuleType]

    def __init__(self, config: Any) -> None:
        self.config = config
        self.roles = tuple(config.roles)
        self.max_repairs = config.max_repairs

    def start(self, seed: int, first_speaker: str | None) -> Any:
        """The initial state; all randomness comes from ``seed``."""
        return self.engine.start(self.config, seed, first_speaker)

    def to_move(self, state: Any) -> str | None:
        """The role asked next, or None once the game has ended."""
        return self.engine.to_move(self.config, state)

    def prompt(self, state: Any, role: str) -> Prompt:
        """The request for ``role``, rendered from that role's view only."""
        return self.prompts.prompt(self.config, state, role)

    def parse(self, state: Any, role: str, reply: str) -> Any:
        """The action in ``reply``; raises RuleError naming the broken rule."""
        return self.engine.parse(self.config, state, role, reply)

    def repair_message(self, state: Any, role: str, error: RuleError) -> str:
        """The user message that answers an invalid reply."""
        return self.prompts.repair_message(self.config, state, role, error)

    def apply(self, state: Any, role: str, action: Any) -> Any:
        """The state after ``role`` plays a legal ``action``."""
        return self.engine.apply(self.config, state, role, action)

    def exhausted(self, state: Any, role: str) -> Any:
        """The state after ``role`` used up its repairs."""
        return self.engine.exhausted(self.config, state, role)

    def ended(self, state: Any) -> Ended | None:
        """How the game ended, once it has."""
        return state.ended

    def outcome(self, state: Any) -> dict[str, Any]:
        """The family's scored figures for an ended game."""
        return self.metrics.outcome(self.config, state)

    def turn_fields(self, state: Any, role: str, action: Any) -> dict[str, Any]:
        """Family columns of the turn record for a legal action."""
        raise NotImplementedError

    # --- what analysis reads: declared here, so a family overrides them and analysis never looks one up by name

    headline: ClassVar[tuple[str, ...]] = DEFAULT_HEADLINE
    """Metrics the report shows by cell (deal rate and format failures are always shown)."""
    private_fields: ClassVar[tuple[str, ...]] = ()
    """Turn fields private to the speaker beyond those named private/scratchpad/reasoning (e.g. a true valuation)."""
    fields: ClassVar[dict[str, str]] = {}
    """What each of the family's metric columns means, for the dataset card."""

    def game_metrics(self, record: dict[str, Any]) -> dict[str, Scalar]:
        """The family's figures of one finished, known game (its journaled record), computed once as it ends."""
        return {}

    def turn_metrics(self, record: dict[str, Any]) -> list[dict[str, Scalar]]:
        """The family's per-turn figures of a finished game; each row names its ``turn``."""
        return []

    def utility_space(self) -> UtilitySpace | None:
        """The exact agreement space a plot draws deals against, for families that have one."""
        return None
