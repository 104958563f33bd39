"""What a sweep will cost before it runs.

Calls and input tokens come from playing each kind of game once offline, with
linear strategy agents reading the real prompts (the record grows turn by
turn, so later calls cost more); output tokens are a typical reply plus a
thinking allowance when a model thinks. Prices come from each model's
``price`` table. The result is an estimate, printed with its assumptions.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from bargain_ray.config import ModelConfig, SweepConfig
from bargain_ray.core.prompt import Prompt
from bargain_ray.core.records import Reply
from bargain_ray.core.unit import Unit
from bargain_ray.design.merge import game_config
from bargain_ray.games import family, load_game
from bargain_ray.play.loop import play
from bargain_ray.providers import effective_model

CHARS_PER_TOKEN = 4
REPLY_TOKENS = 150
"""A typical visible reply: the JSON action and a message of up to 80 words."""
THINKING_TOKENS = 600
"""Assumed thinking per call for a model configured with ``thinking`` (adaptive, low effort)."""


@dataclass
class ProbeAgent:
    """Answers as a linear strategy and notes the size of every prompt its role is sent."""

    role: str
    respond: Any
    sizes: dict[str, list[int]]

    async def act(self, prompt: Prompt, call_id: str) -> Reply:
        messages = [m.model_dump() for m in prompt.messages]
        chars = len(prompt.system) + sum(len(m["content"]) for m in messages)
        self.sizes[self.role].append(max(1, chars // CHARS_PER_TOKEN))
        text = self.respond(prompt.system, messages, {"kind": "linear"})
        return Reply(text=text, provider="probe", model="probe", request={})


def typical_game(sweep: SweepConfig, unit: Unit) -> dict[str, list[int]]:
    """Input tokens of each call, by role, in one offline game shaped like ``unit``."""
    game = load_game(game_config(sweep, unit.game, unit.condition))
    respond = family(unit.family).strategy.respond
    sizes: dict[str, list[int]] = defaultdict(list)
    agents = {role: ProbeAgent(role, respond, sizes) for role in game.roles}
    asyncio.run(play(game, agents, unit))
    return dict(sizes)


def output_tokens(model: ModelConfig) -> int:
    return REPLY_TOKENS + (THINKING_TOKENS if "thinking" in model.params else 0)


def estimate(sweep: SweepConfig, todo: list[Unit]) -> str:
    """The dry-run plan: units, expected calls, tokens and cost per model."""
    shapes: dict[tuple[Any, ...], dict[str, list[int]]] = {}
    per_model: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for unit in todo:
        shape = (unit.game, unit.condition, unit.first_speaker)
        if shape not in shapes:
            shapes[shape] = typical_game(sweep, unit)
        for role, letter in unit.model_of_role.items():
            model = effective_model(sweep, letter)
            if not model.is_llm:
                continue
            calls = shapes[shape].get(role, [])
            out = output_tokens(model) * len(calls)
            m = per_model[f"{model.provider}:{model.name}"]
            m["games"] += 1
            m["calls"] += len(calls)
            m["input_tokens"] += sum(calls)
            m["output_tokens"] += out
            m["cost_usd"] += (sum(calls) * model.price.input + out * model.price.output) / 1e6
    lines = [f"plan (nothing is spent in a dry run): {len(todo)} units to play"]
    for name, m in sorted(per_model.items()):
        lines.append(
            f"  {name}: {int(m['games'])} roles played, ~{int(m['calls'])} calls, "
            f"~{int(m['input_tokens'])} input / ~{int(m['output_tokens'])} output tokens, ~${m['cost_usd']:.2f}"
        )
    total = sum(m["cost_usd"] for m in per_model.values())
    lines.append(f"  estimated total: ~${total:.2f}" + (
        f" (run.max_cost_usd={sweep.run.max_cost_usd})" if sweep.run.max_cost_usd is not None else ""))
    lines.append(
        f"  assumptions: calls and prompts of one offline game per (game, condition, first speaker) with linear "
        f"strategies, no repairs, no cache; {CHARS_PER_TOKEN} characters a token; {REPLY_TOKENS} output tokens a "
        f"reply plus {THINKING_TOKENS} thinking tokens for models configured with thinking."
    )
    return "\n".join(lines)
