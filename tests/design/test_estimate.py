"""The dry-run plan: units, expected calls and estimated cost per model, before anything is spent."""

from __future__ import annotations

import re

from bargain_ray.design import units
from bargain_ray.design.estimate import ModelCost, estimate, estimate_cost
from bargain_ray.design.resolved import compose_sweep
from bargain_ray.play.probe import typical_calls


def plan(*overrides: str) -> str:
    sweep = compose_sweep(list(overrides))
    return estimate(sweep, list(units(sweep, "20260101")), typical_calls)


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


def costs(*overrides: str) -> dict[str, ModelCost]:
    sweep = compose_sweep(list(overrides))
    return {m.model: m for m in estimate_cost(sweep, list(units(sweep, "20260101")), typical_calls).models}


def test_batch_mode_estimates_the_batch_price_of_the_same_plan() -> None:
    online, batch = costs("+grid=c3_smoke"), costs("+grid=c3_smoke", "run.batch_api=true")
    assert set(online) == set(batch) == {"anthropic:claude-opus-5-5", "anthropic:claude-haiku-5-5"}
    for name, plain in online.items():
        cheap = batch[name]
        assert not plain.batched and plain.cost_usd == plain.list_usd > 0
        assert cheap.batched and (cheap.calls, cheap.input_tokens, cheap.output_tokens) == \
            (plain.calls, plain.input_tokens, plain.output_tokens)
        assert cheap.list_usd == plain.list_usd and cheap.cost_usd == plain.cost_usd * (1 - cheap.discount)
        assert cheap.discount == 0.5  # conf/model prices keep the default batch_discount
    text = plan("+grid=c3_smoke", "run.batch_api=true")
    assert f"~${batch['anthropic:claude-opus-5-5'].cost_usd:.2f} at the batch API's price (50% off " \
           f"~${online['anthropic:claude-opus-5-5'].cost_usd:.2f})" in text
    assert "batch" not in plan("+grid=c3_smoke")


def test_a_models_own_batch_setting_wins_and_models_without_a_batch_api_stay_at_list_price() -> None:
    mixed = costs("+grid=c3_smoke", "run.batch_api=true", "+models.H.batch_api=false")
    assert mixed["anthropic:claude-opus-5-5"].batched and not mixed["anthropic:claude-haiku-5-5"].batched
    only = costs("+grid=c3_smoke", "+models.O.batch_api=true")
    assert only["anthropic:claude-opus-5-5"].batched and not only["anthropic:claude-haiku-5-5"].batched
    routed = costs("+grid=bargaining_8cells", "run.batch_api=true")  # OpenRouter: openai_compatible, no batch API
    assert routed and not any(m.batched for m in routed.values())
    assert all(m.cost_usd == m.list_usd for m in routed.values())


def test_the_dry_run_bounds_the_cost_by_every_call_a_game_can_make() -> None:
    """The upper bound: each role's turn limit x (1 + repairs) calls, each at max_tokens out and the offline game's
    longest request in (plus the failed replies a repair carries), priced as the estimate is."""
    sweep = compose_sweep(["+grid=c3_smoke"])
    plan_ = estimate_cost(sweep, list(units(sweep, "20260101")), typical_calls)
    assert plan_.bound_usd is not None and plan_.bound_usd > 10 * plan_.total_usd > 0
    game = sweep.game("tickets", "C3")
    assert game.turn_limits() == {"buyer": 7, "seller": 7}  # 12 turns and the final reply, alternating
    opus = next(m for m in plan_.models if "opus" in m.model)
    model = next(m for m in sweep.models.values() if m.name == "claude-opus-5-5")
    calls = 16 * 7 * 3  # 16 roles played, 7 turns each, 1 call and 2 repairs a turn
    assert opus.bound_usd >= calls * model.max_tokens * model.price.output / 1e6
    text = estimate(sweep, list(units(sweep, "20260101")), typical_calls)
    assert re.search(r"estimated total: ~\$[\d.]+; upper bound \$[\d.]+", text)
    assert re.search(r"anthropic:claude-opus-5-5: .* \(at most \$[\d.]+\)", text)


def test_a_family_declares_the_turns_each_role_can_take() -> None:
    limits = {name: compose_sweep([f"+grid={name}"]) for name in ("bargaining_demo", "scorable_demo", "freetext_demo")}
    assert limits["bargaining_demo"].game("bargaining", "default").turn_limits() == {"seller": 10, "buyer": 10}
    assert set(limits["scorable_demo"].game("scorable6", "public").turn_limits().values()) == {4}
    orange = limits["freetext_demo"].game("orange", "FT")
    assert orange.turn_limits() == {**dict.fromkeys(orange.parties(), 6), "observer": 12}
