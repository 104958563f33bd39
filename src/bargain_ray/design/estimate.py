"""What a sweep will cost before it runs.

Calls and input tokens come from playing each kind of game once offline, with
linear strategy agents reading the real prompts (the record grows turn by
turn, so later calls cost more); output tokens are a typical reply plus a
thinking allowance when a model thinks. Prices come from each model's
``price`` table, at its batch price where the run sends that model through a
batch API (``ResolvedSweep.sends_batched``, ``Price.charged``: the same two the
paid calls go by). The result is an estimate, printed with its assumptions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from bargain_ray.config import ModelConfig, Price
from bargain_ray.config.pricing import CHARS_PER_TOKEN, cost_usd
from bargain_ray.core.records import Usage, model_key
from bargain_ray.core.unit import Unit
from bargain_ray.games import Game

if TYPE_CHECKING:
    from bargain_ray.design.resolved import ResolvedSweep

REPLY_TOKENS = 150
"""A typical visible reply: the JSON action and a message of up to 80 words."""
THINKING_TOKENS = 600
"""Assumed thinking per call for a model configured with ``thinking`` (adaptive, low effort)."""

Measure = Callable[[Game, Unit], dict[str, list[int]]]
"""(game, unit) -> the input tokens of each call, by role, of one offline game shaped like the unit
(``play.probe.typical_calls``: the caller hands it in, so the design plays no game itself)."""


def output_tokens(model: ModelConfig) -> int:
    return REPLY_TOKENS + (THINKING_TOKENS if "thinking" in model.params else 0)


class ModelCost(BaseModel):
    """One model's share of the plan (a model sent both online and batched has two)."""

    model: str
    """provider:name, as this run calls it."""
    batched: bool
    price: Price
    games: int = 0
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    list_usd: float = 0.0
    """At the online (list) price."""

    @property
    def discount(self) -> float:
        """The share of the list price a batch call saves (the model's ``price.batch_discount``)."""
        return self.price.batch_discount

    @property
    def cost_usd(self) -> float:
        """As it would be billed: ``list_usd`` at the batch price when ``batched``."""
        return self.price.charged(self.list_usd, self.batched)

    def line(self) -> str:
        billed = f"~${self.cost_usd:.2f}" + (
            f" at the batch API's price ({self.discount:.0%} off ~${self.list_usd:.2f})" if self.batched else "")
        return (f"  {self.model}: {self.games} roles played, ~{self.calls} calls, "
                f"~{self.input_tokens} input / ~{self.output_tokens} output tokens, {billed}")


class Estimate(BaseModel):
    """The dry run's plan: units to play and what each model is expected to cost."""

    units: int
    models: list[ModelCost]
    max_cost_usd: float | None

    @property
    def total_usd(self) -> float:
        return sum(m.cost_usd for m in self.models)

    def text(self) -> str:
        lines = [f"plan (nothing is spent in a dry run): {self.units} units to play", *(m.line() for m in self.models)]
        lines.append(f"  estimated total: ~${self.total_usd:.2f}" + (
            f" (run.max_cost_usd={self.max_cost_usd})" if self.max_cost_usd is not None else ""))
        lines.append(
            f"  assumptions: calls and prompts of one offline game per (game, condition, first speaker) with linear "
            f"strategies, no repairs, no cache; {CHARS_PER_TOKEN} characters a token; {REPLY_TOKENS} output tokens a "
            f"reply plus {THINKING_TOKENS} thinking tokens for models configured with thinking."
        )
        return "\n".join(lines)


def estimate_cost(sweep: ResolvedSweep, todo: list[Unit], measure: Measure) -> Estimate:
    """Expected calls, tokens and cost per model of playing ``todo``, each kind of game measured once."""
    shapes: dict[tuple[Any, ...], dict[str, list[int]]] = {}
    per_model: dict[tuple[str, bool], ModelCost] = {}
    for unit in todo:
        shape = (unit.game, unit.condition, unit.first_speaker)
        if shape not in shapes:
            shapes[shape] = measure(sweep.game(unit.game, unit.condition), unit)
        for role, letter in unit.letter_of_role.items():
            model = sweep.models[letter]
            if not model.is_llm:
                continue
            calls = shapes[shape].get(role, [])
            out = output_tokens(model) * len(calls)
            batched = sweep.sends_batched(model)
            name = model_key(model.provider, model.name)
            m = per_model.setdefault((name, batched), ModelCost(model=name, batched=batched, price=model.price))
            m.games += 1
            m.calls += len(calls)
            m.input_tokens += sum(calls)
            m.output_tokens += out
            m.list_usd += cost_usd(Usage(input_tokens=sum(calls), output_tokens=out), model.price)
    return Estimate(units=len(todo), models=[per_model[k] for k in sorted(per_model)],
                    max_cost_usd=sweep.run.max_cost_usd)


def estimate(sweep: ResolvedSweep, todo: list[Unit], measure: Measure) -> str:
    """The dry-run plan as printed: units, expected calls, tokens and cost per model, and the assumptions."""
    return estimate_cost(sweep, todo, measure).text()
