"""What every game family provides to the shared game loop: the contract, as protocols and one base class.

A family is an engine (pure rules), a prompt module (wording), a metrics module (the outcome record
and the figures of a finished game) and a strategy module (the offline agent), each a module that
satisfies one runtime-checkable protocol below. ``Game`` binds a family's modules to one config;
subclassing it checks the modules once, when the family loads, and names any missing function. The
loop, the agents, the runner, the store and analysis only ever see this interface, so a new family
never changes them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Generic, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel, ConfigDict

from bargain_ray.core.prompt import Prompt
from bargain_ray.core.records import FamilyFields, FamilyOutcome, GameRecord, Scalar, TurnRecord
from bargain_ray.core.status import Ended
from bargain_ray.games.kit.results import Results
from bargain_ray.games.provenance import Declared, Metric, Provenance, Text


class GameState(BaseModel):
    """What the loop reads of every family's state: how it ended, and which role broke the format."""

    model_config = ConfigDict(frozen=True)

    ended: Ended | None = None
    failed_role: str | None = None


C = TypeVar("C", bound=BaseModel)
S = TypeVar("S", bound=GameState)
A = TypeVar("A")
Cin = TypeVar("Cin", bound=BaseModel, contravariant=True)
Sin = TypeVar("Sin", bound=GameState, contravariant=True)
"""A config and a state the prompts and the metrics only read (a protocol's type parameters that only arguments
use are contravariant)."""


class FamilyConfig(Protocol):
    """What code that serves every family reads of a game config (each family's own pydantic model, ``Config``)."""

    @property
    def family(self) -> str: ...


class UtilitySpace(BaseModel):
    """A two-party agreement space in utility points, as a plot draws it (first role on x)."""

    model_config = ConfigDict(frozen=True)

    roles: tuple[str, str]
    frontier: list[tuple[float, float]]
    disagreement: tuple[float, float]
    nash: tuple[float, float] | None
    max_welfare: list[tuple[float, float]]
    ranges: tuple[tuple[float, float], tuple[float, float]]


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


@runtime_checkable
class Engine(Protocol[Cin, S, A]):
    """The pure rules: state in, action in, state out. ``PROTOCOL`` declares every rule with its provenance."""

    PROTOCOL: tuple[Declared, ...]

    def start(self, config: Cin, seed: int, first_speaker: str | None) -> S: ...
    def to_move(self, config: Cin, state: S) -> str | None: ...
    def parse(self, config: Cin, state: S, role: str, reply: str) -> A: ...
    def apply(self, config: Cin, state: S, role: str, action: A) -> S: ...
    def exhausted(self, config: Cin, state: S, role: str) -> S: ...
    def turn_fields(self, config: Cin, state: S, role: str, action: A) -> FamilyFields: ...


@runtime_checkable
class Prompts(Protocol[Cin, Sin]):
    """Every word a model reads: the request of a turn, each rule's sentence, the repair, every text."""

    def prompt(self, config: Cin, state: Sin, role: str) -> Prompt: ...
    def rule_sentence(self, config: Cin, error: RuleError) -> str: ...
    def repair_message(self, config: Cin, state: Sin, role: str, error: RuleError) -> str: ...
    def texts(self, config: Cin) -> dict[str, Text]: ...
    def schemas(self, config: Cin) -> dict[str, dict[str, Any]]: ...  # free-form: JSON Schemas, sent as is


@runtime_checkable
class Metrics(Protocol[Cin, Sin]):
    """The scored outcome of an ended state, and the figures of a finished game read from its typed record
    (as journaled, so an archived sweep re-scores alike): per turn, and per game (given the per-turn rows when
    they are at hand, else computing them). ``METRICS`` declares every figure's meaning and source."""

    METRICS: dict[str, Metric]

    def outcome(self, config: Cin, state: Sin) -> FamilyOutcome: ...
    def per_game(self, config: Cin, record: GameRecord,
                 turns: list[dict[str, Scalar]] | None = None) -> dict[str, Scalar]: ...
    def per_turn(self, config: Cin, record: GameRecord) -> list[dict[str, Scalar]]: ...


@runtime_checkable
class Strategy(Protocol):
    """The offline agent of a family: it reads only the prompt text a model would read. ``Params`` is the model of
    its parameters (a model's ``strategy`` block), checked when the sweep is resolved and read by ``respond``."""

    @property
    def Params(self) -> type[BaseModel]: ...  # the strategy module's class of that name
    def recognizes(self, system: str) -> bool: ...
    def respond(self, system: str, messages: list[dict[str, str]], params: Mapping[str, Any]) -> str: ...  # free-form: the strategy block as written, read as Params


CONTRACT: dict[str, type] = {"engine": Engine, "prompts": Prompts, "metrics": Metrics, "strategy": Strategy}
"""Each module a family provides and the protocol it satisfies."""


def members(protocol: type) -> list[str]:
    """The functions and attributes a protocol asks for, in declaration order."""
    names = [n for n, v in vars(protocol).items() if (callable(v) or isinstance(v, property)) and not n.startswith("_")]
    return [*getattr(protocol, "__annotations__", {}), *names]


class IncompleteFamily(TypeError):
    """A family module lacks what the game contract asks of it."""


def check_family(name: str, modules: dict[str, object]) -> None:
    """Every module of a family satisfies its protocol; else one error naming each missing function."""
    missing = [f"{kind}.{member}" for kind, protocol in CONTRACT.items()
               for member in members(protocol) if not hasattr(modules[kind], member)]
    bad = [kind for kind, protocol in CONTRACT.items() if not isinstance(modules[kind], protocol)]
    if missing or bad:
        contract = ", ".join(f"{kind} ({protocol.__name__})" for kind, protocol in CONTRACT.items())
        raise IncompleteFamily(f"game family {name} does not satisfy the game contract (games/base.py: {contract}): "
                               f"missing {', '.join(missing or bad)}")


class Game(Generic[C, S, A]):
    """A game family bound to one config; every method is pure. The loop knows games only by this.

    A family subclasses it (``class BargainingGame(Game[BargainingConfig, State, Reply])``) naming its
    ``Config``, its four modules and its two record models (``Fields``, ``Scored``); the subclass is checked
    against the contract as it is defined.
    What analysis reads of a family is declared here as typed class attributes, so a family overrides
    them and analysis never looks a hook up by name.
    """

    family: ClassVar[str]
    Config: ClassVar[type[BaseModel]]
    Fields: ClassVar[type[FamilyFields]]
    """The model of the family's turn fields (its engine's ``turn_fields``)."""
    Scored: ClassVar[type[FamilyOutcome]]
    """The model of the family's scored outcome (its metrics' ``outcome``)."""
    engine: ClassVar[Engine[Any, Any, Any]]
    prompts: ClassVar[Prompts[Any, Any]]
    metrics: ClassVar[Metrics[Any, Any]]
    strategy: ClassVar[Strategy]

    results: ClassVar[Results | None] = None
    """What the report shows of this family's games (its metrics module's ``RESULTS``); None: the shared figures."""
    private_fields: ClassVar[tuple[str, ...]] = ()
    """Turn fields private to the speaker beyond those named private/scratchpad/reasoning (e.g. a true valuation)."""
    cell_metrics: ClassVar[tuple[str, ...]] = ()
    """The metrics the export's ``metrics_by_cell`` holds for this family, in order (none: the export picks)."""
    illegal_rules: ClassVar[frozenset[str]] = frozenset()
    """Rule codes an invalid reply breaks by proposing a move the protocol forbids (``n_illegal``); the rest are
    format errors."""
    ground_truth: ClassVar[tuple[str, ...]] = ()
    """Outcome fields that are private truths of the game, copied to the raw log's header."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        check_family(cls.__name__, {kind: getattr(cls, kind, None) for kind in CONTRACT})
        untyped = [name for name, base in (("Fields", FamilyFields), ("Scored", FamilyOutcome))
                   if not (isinstance(getattr(cls, name, None), type) and issubclass(getattr(cls, name), base))]
        if untyped:
            raise IncompleteFamily(f"game family {cls.__name__} names no record model {' or '.join(untyped)} "
                                   "(a FamilyFields and a FamilyOutcome subclass, games/<family>/records.py)")

    def __init__(self, config: C) -> None:
        self.config = config
        self.roles: tuple[str, ...] = tuple(config.roles)  # type: ignore[attr-defined]
        self.max_repairs: int = config.max_repairs  # type: ignore[attr-defined]

    @classmethod
    def metric_fields(cls) -> dict[str, str]:
        """What each of the family's metric columns means, for the dataset card."""
        return {name: m.meaning for name, m in cls.metrics.METRICS.items()}

    @classmethod
    def rules(cls) -> tuple[Declared, ...]:
        """Every rule of the family's protocol, with its provenance."""
        return cls.engine.PROTOCOL

    def start(self, seed: int, first_speaker: str | None) -> S:
        """The initial state; all randomness comes from ``seed``."""
        return self.engine.start(self.config, seed, first_speaker)

    def to_move(self, state: S) -> str | None:
        """The role asked next, or None once the game has ended."""
        return self.engine.to_move(self.config, state)

    def prompt(self, state: S, role: str) -> Prompt:
        """The request for ``role``, rendered from that role's view only."""
        return self.prompts.prompt(self.config, state, role)

    def parse(self, state: S, role: str, reply: str) -> A:
        """The action in ``reply``; raises RuleError naming the broken rule, its sentence rendered by prompts."""
        try:
            return self.engine.parse(self.config, state, role, reply)
        except RuleError as error:
            error.sentence = self.prompts.rule_sentence(self.config, error)
            raise

    def repair_message(self, state: S, role: str, error: RuleError) -> str:
        """The user message that answers an invalid reply."""
        return self.prompts.repair_message(self.config, state, role, error)

    def texts(self) -> dict[str, Text]:
        """Every text a model can read under this config, rendered, by name (``Text``: the text and its
        provenance). The resume fingerprint digests these, not source code."""
        return self.prompts.texts(self.config)

    def schemas(self) -> dict[str, dict[str, Any]]:  # free-form: JSON Schemas, sent to the provider as is
        """The legal-move schema a request carries at each representative state, by state: what a model reads
        when its output is constrained (``structured_output``), so the fingerprint digests them then."""
        return self.prompts.schemas(self.config)

    def apply(self, state: S, role: str, action: A) -> S:
        """The state after ``role`` plays a legal ``action``."""
        return self.engine.apply(self.config, state, role, action)

    def exhausted(self, state: S, role: str) -> S:
        """The state after ``role`` used up its repairs."""
        return self.engine.exhausted(self.config, state, role)

    def ended(self, state: S) -> Ended | None:
        """How the game ended, once it has."""
        return state.ended

    def outcome(self, state: S) -> FamilyOutcome:
        """The family's scored figures for an ended game."""
        return self.metrics.outcome(self.config, state)

    def outcome_bounds(self) -> dict[str, list[int | float]] | None:
        """Each figure's range under this config, for ``Outcome.bounds`` (families that have them)."""
        return None

    def turn_fields(self, state: S, role: str, action: A) -> FamilyFields:
        """Family columns of the turn record for a legal action."""
        return self.engine.turn_fields(self.config, state, role, action)

    @classmethod
    def typed(cls, record: GameRecord) -> GameRecord:
        """``record`` with its family parts (each legal turn's fields, the scored outcome) as this family's models.

        The family's models are applied here, not where a journal line is read: the store reads every line at
        the core layer, which knows no family, so a record read back holds its parts as written (the base
        models). The family's own readers get the record through its Game (``game_metrics``, ``turn_metrics``:
        re-scoring, the figures of a game as it ends), so they read attributes of its models and a line that
        does not fit them is refused there. Readers that show every family alike (the tables, the report, the
        export, the live view) read the parts as the JSON they write, which is the same typed or not. A record
        already typed (played by this code) is returned as it is."""
        out = record.outcome
        scored = out.scored if out.scored.blank else cls.Scored.of(out.scored)
        turns = [cls._typed_turn(t) for t in record.turns]
        if scored is out.scored and all(a is b for a, b in zip(turns, record.turns, strict=True)):
            return record
        return record.model_copy(update={"outcome": out.model_copy(update={"scored": scored}), "turns": turns})

    @classmethod
    def _typed_turn(cls, turn: TurnRecord) -> TurnRecord:
        fields = turn.fields if turn.fields.blank else cls.Fields.of(turn.fields)
        return turn if fields is turn.fields else turn.model_copy(update={"fields": fields})

    def game_metrics(self, record: GameRecord, turns: list[dict[str, Scalar]] | None = None) -> dict[str, Scalar]:
        """The family's figures of one finished, known game, computed from its record as it ends (and by
        ``rescore`` from the journal, with the config the game was played under); ``turns``: its per-turn
        figures, when already computed."""
        return self.metrics.per_game(self.config, self.typed(record), turns)

    def turn_metrics(self, record: GameRecord) -> list[dict[str, Scalar]]:
        """The family's per-turn figures of a finished game; each row names its ``turn``."""
        return self.metrics.per_turn(self.config, self.typed(record))

    def utility_space(self) -> UtilitySpace | None:
        """The exact agreement space a plot draws deals against, for families that have one."""
        return None

    def parties(self) -> tuple[str, ...]:
        """The roles that negotiate, whose models a head-to-head compares (a role that only judges is not one)."""
        return self.roles

    def turn_limits(self) -> dict[str, int] | None:
        """The most turns each role can be asked in one game under this config (each turn is one call and up to
        ``max_repairs`` more): the dry run's upper bound. None: the family states none."""
        return None


__all__ = ["Declared", "Engine", "Game", "GameState", "IncompleteFamily", "Metric", "Metrics",
           "Prompts", "Provenance", "RuleError", "Scalar", "Strategy", "UtilitySpace"]
