"""What every game family provides to the shared game loop.

A family is an engine (pure rules), a prompt module (wording), and a metrics
module (the outcome record). The loop, the agents, the runner and the store
only ever see this interface, so a new family never changes them.
"""

from __future__ import annotations

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
    """A reply broke a rule: ``rule`` is its code, ``facts`` what the sentence needs; never words.
    ``case`` picks one of a rule's sentences when a rule has several (its template is ``rule/case``).

    An engine raises it without a sentence; ``Game.parse`` has the family's prompts render
    ``sentence``, so every word the model reads comes from ``prompts``. ``str()`` is the sentence
    (what the repair message quotes and the call record keeps) once rendered.
    """

    def __init__(self, rule: str, case: str | None = None, **facts: Any) -> None:
        super().__init__(rule)
        self.rule = rule
        self.case = case
        self.facts = facts
        self.sentence: str | None = None

    @property
    def template(self) -> str:
        """The name of the sentence template in a family's rule table."""
        return self.rule if self.case is None else f"{self.rule}/{self.case}"

    def __str__(self) -> str:
        return self.sentence if self.sentence is not None else f"{self.template} {self.facts}"


class Game:
    """A game family bound to one config; every method is pure. The loop knows games only by this.

    It delegates to the family's modules by one convention:

    ``engine``: ``start(config, seed, first_speaker)``, ``to_move(config, state)``,
    ``parse(config, state, role, reply)``, ``apply(config, state, role, action)``,
    ``exhausted(config, state, role)``; ``prompts``: ``prompt(config, state, role)``,
    ``rule_sentence(config, error)``, ``repair_message(config, state, role, error)``,
    ``texts(config)``; ``metrics``: ``outcome(config, state)``, ``per_game(record)`` and, for a family
    with per-turn figures, ``per_turn(record)``. States carry ``ended``. A family adds only
    ``turn_fields``; it is named once, by its config's ``family`` key.
    """

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
        """The action in ``reply``; raises RuleError naming the broken rule, its sentence rendered by prompts."""
        try:
            return self.engine.parse(self.config, state, role, reply)
        except RuleError as error:
            error.sentence = self.prompts.rule_sentence(self.config, error)
            raise

    def repair_message(self, state: Any, role: str, error: RuleError) -> str:
        """The user message that answers an invalid reply."""
        return self.prompts.repair_message(self.config, state, role, error)

    def texts(self) -> dict[str, Any]:
        """Every text a model can read under this config, rendered, by name (``kit.wording.Text``:
        the text and its provenance). The resume fingerprint digests these, not source code."""
        return self.prompts.texts(self.config)

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
        return self.metrics.per_game(record)

    def turn_metrics(self, record: dict[str, Any]) -> list[dict[str, Scalar]]:
        """The family's per-turn figures of a finished game; each row names its ``turn`` (none without ``per_turn``)."""
        per_turn = getattr(self.metrics, "per_turn", None)
        return per_turn(record) if per_turn is not None else []

    def utility_space(self) -> UtilitySpace | None:
        """The exact agreement space a plot draws deals against, for families that have one."""
        return None
