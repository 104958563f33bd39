"""The dry-run plan: units, expected calls and estimated cost per model, before anything is spent."""

from __future__ import annotations

import re

from bargain_ray.config import SweepConfig, compose_dict
from bargain_ray.design import units
from bargain_ray.design.estimate import estimate


def plan(*overrides: str) -> str:
    sweep = SweepConfig.model_validate(compose_dict("config", list(overrides)))
    return estimate(sweep, list(units(sweep, "20260101")))


def test_c3_plan_prices_each_model() -> None:
    text = plan("+grid=c3_smoke")
    assert "16 units to play" in text
    costs = dict(re.findall(r"anthropic:(claude-\w+-5-5): .*~\$([\d.]+)", text))
    assert set(costs) == {"claude-opus-5-5", "claude-haiku-5-5"}
    assert float(costs["claude-opus-5-5"]) > float(costs["claude-haiku-5-5"]) > 0
    calls = [int(n) for n in re.findall(r"~(\d+) calls", text)]
    assert all(16 <= n <= 16 * 13 for n in calls)  # each model plays 16 roles, at most every turn


def test_strategy_only_grid_costs_nothing() -> None:
    text = plan("+grid=demo")
    assert "~$0.00" in text and "calls" not in text.split("estimated total")[0].split("\n", 1)[-1]
