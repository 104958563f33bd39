"""What a sweep will cost before it runs: an estimate, and an upper bound it cannot pass.

The estimate: where the sweep folder already holds finished games of a game, model and role, their measured calls
a game and tokens a call (``measure``: a pilot, or the finished part of a folder being grown); else one offline
game of each kind played by linear strategy agents reading the real prompts (the record grows turn by turn, so
later calls cost more), each reply a typical visible reply plus a thinking allowance when a model thinks.

The upper bound: every call a game can make (each role's turn limit, ``Game.turn_limits``, times one call and its
repairs), each replying the model's ``max_tokens`` and sending the longest request the offline game sent that
role, plus, when a repair follows, the failed reply it carries (at ``max_tokens``). Its input part assumes messages
no longer than the offline game's (a model's longer messages send more); calls and output are bounded.

Prices come from each model's ``price`` table, at its batch price where the run sends that model through a batch API
(``ResolvedSweep.sends_batched``, ``Price.charged``: the same two the paid calls go by).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from bargain_ray.config import ModelConfig, Price
from bargain_ray.config.pricing import CHARS_PER_TOKEN, cost_usd
from bargain_ray.core.records import GameRecord, Usage, model_key
from bargain_ray.core.unit import Unit
from bargain_ray.games import Game

if TYPE_CHECKING:
    from bargain_ray.design.resolved import ResolvedSweep

REPLY_TOKENS = 150
"""A typical visible reply: the JSON action and a message of up to 80 words."""
THINKING_TOKENS = 600
"""Assumed thinking per call for a model configured with ``thinking`` (adaptive, low effort)."""

Probe = Callable[[Game, Unit], dict[str, list[int]]]
"""(game, unit) -> the input tokens of each call, by role, of one offline game shaped like the unit
(``play.probe.typical_calls``: the caller hands it in, so the design plays no game itself)."""


class Measured(BaseModel):
    """What finished games of one (game, model, role) used: their calls and tokens."""

    games: int = 0
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    def per_game(self) -> tuple[float, float, float]:
        """(calls, input tokens, output tokens) a game, on average."""
        return self.calls / self.games, self.input_tokens / self.games, self.output_tokens / self.games


class Measurements(BaseModel):
    """A folder's finished games as the estimate reads them: how many, and what each (game, model, role) used."""

    games: int = 0
    roles: dict[tuple[str, str, str], Measured] = {}
    """(game, model name, role) -> its calls and tokens; a role whose games made no model call is left out."""


def measure(records: Iterable[GameRecord]) -> Measurements:
    """The calls and tokens of every known game of ``records`` (a folder's finished games), by game, model, role:
    what a dry run of the same folder estimates the rest from."""
    roles: dict[tuple[str, str, str], Measured] = {}
    games = 0
    for record in records:
        if not record.outcome.known:
            continue
        games += 1
        unit = record.unit
        for role, model in unit.models_by_role.items():
            calls = [c for c in record.calls if c.role == role]
            m = roles.setdefault((unit.game, model, role), Measured())
            m.games += 1
            m.calls += len(calls)
            m.input_tokens += sum(c.usage.input_tokens for c in calls)
            m.output_tokens += sum(c.usage.output_tokens for c in calls)
    return Measurements(games=games, roles={k: m for k, m in roles.items() if m.calls})


def output_tokens(model: ModelConfig) -> int:
    return REPLY_TOKENS + (THINKING_TOKENS if "thinking" in model.params else 0)


class ModelCost(BaseModel):
    """One model's share of the plan (a model sent both online and batched has two)."""

    model: str
    """provider:name, as this run calls it."""
    batched: bool
    price: Price
    games: int = 0
    calls: float = 0
    input_tokens: float = 0
    output_tokens: float = 0
    list_usd: float = 0.0
    """At the online (list) price."""
    bound_list_usd: float | None = 0.0
    """The upper bound at the online price (None: a game of a family that states no turn limit)."""
    measured: int = 0
    """Roles played whose figures come from the folder's finished games (the rest from the offline game)."""

    @property
    def discount(self) -> float:
        """The share of the list price a batch call saves (the model's ``price.batch_discount``)."""
        return self.price.batch_discount

    @property
    def cost_usd(self) -> float:
        """As it would be billed: ``list_usd`` at the batch price when ``batched``."""
        return self.price.charged(self.list_usd, self.batched)

    @property
    def bound_usd(self) -> float | None:
        return None if self.bound_list_usd is None else self.price.charged(self.bound_list_usd, self.batched)

    def add(self, calls: float, input_tokens: float, output: float, bound: float | None, measured: bool) -> None:
        """One role of one game: its expected calls and tokens, and its bound at list price."""
        self.games += 1
        self.calls += calls
        self.input_tokens += input_tokens
        self.output_tokens += output
        self.list_usd += cost_usd(Usage(input_tokens=round(input_tokens), output_tokens=round(output)), self.price)
        self.bound_list_usd = None if bound is None or self.bound_list_usd is None else self.bound_list_usd + bound
        self.measured += measured

    def line(self) -> str:
        billed = f"~${self.cost_usd:.2f}" + (
            f" at the batch API's price ({self.discount:.0%} off ~${self.list_usd:.2f})" if self.batched else "")
        bound = "no bound" if self.bound_usd is None else f"at most ${self.bound_usd:.2f}"
        source = f"; {self.measured} of {self.games} measured" if self.measured else ""
        return (f"  {self.model}: {self.games} roles played, ~{self.calls:.0f} calls, ~{self.input_tokens:.0f} input "
                f"/ ~{self.output_tokens:.0f} output tokens, {billed} ({bound}{source})")


class Estimate(BaseModel):
    """The dry run's plan: units to play, what each model is expected to cost and at most costs."""

    units: int
    models: list[ModelCost]
    max_cost_usd: float | None
    measured_games: int = 0
    """Finished games of the folder the measured figures come from (none: every figure is the offline game's)."""

    @property
    def total_usd(self) -> float:
        return sum(m.cost_usd for m in self.models)

    @property
    def bound_usd(self) -> float | None:
        bounds = [m.bound_usd for m in self.models]
        return None if None in bounds else sum(b for b in bounds if b is not None)

    def text(self) -> str:
        bound = "no upper bound (a family states no turn limit)" if self.bound_usd is None else \
            f"upper bound ${self.bound_usd:.2f}"
        lines = [f"plan (nothing is spent in a dry run): {self.units} units to play", *(m.line() for m in self.models)]
        lines.append(f"  estimated total: ~${self.total_usd:.2f}; {bound}" + (
            f" (run.max_cost_usd={self.max_cost_usd})" if self.max_cost_usd is not None else ""))
        if self.measured_games:
            rest = "; the other roles as below" if any(m.measured < m.games for m in self.models) else ""
            lines.append(f"  measured: calls a game and tokens a call of each game, model and role from the "
                         f"{self.measured_games} finished games of this folder{rest}")
        lines.append(
            f"  assumptions: calls and prompts of one offline game per (game, condition, first speaker) with linear "
            f"strategies, no repairs, no cache; {CHARS_PER_TOKEN} characters a token; {REPLY_TOKENS} output tokens a "
            f"reply plus {THINKING_TOKENS} thinking tokens for models configured with thinking. Upper bound: every "
            f"call a game can make (turn limit x (1 + repairs)), each at max_tokens out and the offline game's longest "
            f"request in (plus the failed reply a repair carries); longer messages than the offline game's send more."
        )
        return "\n".join(lines)


def bound_of(game: Game, model: ModelConfig, role: str, sizes: list[int]) -> float | None:
    """The most one role of one game can cost at list price, or None when the family states no turn limit."""
    limits = game.turn_limits()
    if limits is None or role not in limits:
        return None
    turns, repairs = limits[role], game.max_repairs
    longest = max(sizes, default=0)
    calls = turns * (1 + repairs)
    carried = turns * repairs * (repairs + 1) // 2 * model.max_tokens  # the k-th repair carries k failed replies
    usage = Usage(input_tokens=calls * longest + carried, output_tokens=calls * model.max_tokens)
    return cost_usd(usage, model.price)


def estimate_cost(sweep: ResolvedSweep, todo: list[Unit], probe: Probe,
                  measured: Measurements | None = None) -> Estimate:
    """Expected calls, tokens and cost per model of playing ``todo``, and the bound; a role the folder has
    ``measured`` is estimated from it, the rest from one offline game of each kind."""
    measured = measured or Measurements()
    shapes: dict[tuple[Any, ...], tuple[Game, dict[str, list[int]]]] = {}
    per_model: dict[tuple[str, bool], ModelCost] = {}
    for unit in todo:
        shape = (unit.game, unit.condition, unit.first_speaker)
        if shape not in shapes:
            game = sweep.game(unit.game, unit.condition)
            shapes[shape] = (game, probe(game, unit))
        game, sizes = shapes[shape]
        for role, letter in unit.letter_of_role.items():
            model = sweep.models[letter]
            if not model.is_llm:
                continue
            calls = sizes.get(role, [])
            seen = measured.roles.get((unit.game, model.name, role))
            n, tokens_in, tokens_out = seen.per_game() if seen else (
                len(calls), sum(calls), output_tokens(model) * len(calls))
            batched = sweep.sends_batched(model)
            name = model_key(model.provider, model.name)
            m = per_model.setdefault((name, batched), ModelCost(model=name, batched=batched, price=model.price))
            m.add(n, tokens_in, tokens_out, bound_of(game, model, role, calls), seen is not None)
    return Estimate(units=len(todo), models=[per_model[k] for k in sorted(per_model)],
                    max_cost_usd=sweep.run.max_cost_usd, measured_games=measured.games if measured.roles else 0)


def estimate(sweep: ResolvedSweep, todo: list[Unit], probe: Probe, measured: Measurements | None = None) -> str:
    """The dry-run plan as printed: units, expected calls, tokens, cost and bound per model, and the assumptions."""
    return estimate_cost(sweep, todo, probe, measured).text()
