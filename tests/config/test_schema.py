"""Every mistake in a sweep's config is one readable line naming the key as typed; no Ray, no folder."""

from __future__ import annotations

import pytest

from bargain_ray.config.errors import ConfigError
from bargain_ray.design.resolved import compose_sweep


def problems(*overrides: str) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        compose_sweep(overrides)
    return caught.value.problems


@pytest.mark.parametrize(("override", "expected"), [
    ("run.workers=0", "run.workers=0: must be >= 1"),
    ("grid.blocks=-1", "grid.blocks=-1: must be >= 1"),
    ("run.max_in_flight=0", "run.max_in_flight=0: must be >= 1"),
    ("run.games_per_task=0", "run.games_per_task=0: must be >= 1"),
    ("run.max_cost_usd=-1", "run.max_cost_usd=-1: must be >= 0"),
    ("models.O.max_tokens=-1", "models.O.max_tokens=-1: must be >= 1"),
    ("models.O.retry.timeout_s=-1", "models.O.retry.timeout_s=-1: must be > 0"),
    ("models.O.retry.max_attempts=0", "models.O.retry.max_attempts=0: must be >= 1"),
    ("models.O.limits.max_in_flight=0", "models.O.limits.max_in_flight=0: must be >= 1"),
    ("models.O.limits.requests_per_minute=0", "models.O.limits.requests_per_minute=0: must be >= 0.1"),
    ("models.O.price.output=-3", "models.O.price.output=-3: must be >= 0"),
    ("grid.designs=[]", "grid.designs=[]: must hold at least 1 item(s)"),
    ("run.workers=two", "run.workers=two: should be a valid integer"),
])
def test_each_bad_value_is_one_line_with_key_value_and_range(override: str, expected: str) -> None:
    found = problems("+grid=c3_smoke", override)
    assert len(found) == 1 and found[0].startswith(expected), found
    assert "pydantic" not in found[0] and "\n" not in found[0]


def test_every_mistake_is_reported_at_once() -> None:
    assert len(problems("+grid=c3_smoke", "run.workers=0", "grid.blocks=0", "models.H.max_tokens=0")) == 3


@pytest.mark.parametrize(("override", "expected"), [
    ("run.max_cost=5", "unknown key run.max_cost; did you mean run.max_cost_usd?"),
    ("+run.max_cost=5", "unknown key run.max_cost; did you mean run.max_cost_usd?"),  # past Hydra, pydantic's
    ("run.worker=3", "unknown key run.worker; did you mean run.workers?"),
    ("games.tickts.max_turns=3", "unknown key games.tickts.max_turns; did you mean games.tickets.max_turns?"),
    ("models.O.retry.timeout=3", "unknown key models.O.retry.timeout; did you mean models.O.retry.timeout_s?"),
    ("models.Z.max_tokens=3", "unknown key models.Z.max_tokens; models has H, O"),
    ("+grid=c3_smal", "no grid named 'c3_smal'; did you mean +grid=c3_small?"),
    ("provider=simm", "no provider named 'simm'; did you mean provider=sim?"),
    ("model@models.O=claude-opus", "no model named 'claude-opus'; did you mean model@models.O=claude-opus-5-5?"),
])
def test_unknown_key_names_the_nearest_valid_one(override: str, expected: str) -> None:
    grid = [] if override.startswith("+grid") else ["+grid=c3_smoke"]
    found = problems(*grid, override)
    expected = expected.replace("c3_small", "c3_smoke")
    assert found == [expected]


def test_a_key_the_schema_knows_but_the_yaml_omits_is_accepted_and_checked() -> None:
    """Hydra alone would ask for ``+models.B.max_tokens``; the schema knows the key, so it is added."""
    sweep = compose_sweep(["+grid=demo", "models.B.max_tokens=64", "grid.seeds=[1,2,3]"])
    assert sweep.models["B"].max_tokens == 64 and sweep.grid.seeds == [1, 2, 3]
    assert problems("+grid=demo", "models.B.max_tokens=-1") == ["models.B.max_tokens=-1: must be >= 1"]


def test_game_and_provider_settings_are_checked_by_their_own_schemas() -> None:
    assert problems("+grid=c3_smoke", "games.tickets.max_turns=abc") == [
        "games.tickets.max_turns=abc: should be a valid integer, unable to parse string as an integer"]
    assert problems("+grid=freetext_demo", "games.orange.max_turns=-5") == ["games.orange.max_turns=-5: must be >= 1"]
    assert problems("+grid=demo", "provider=sim", "provider.settings.faults.drop=2") == [
        "provider.settings.faults.drop=2: must be <= 1"]
    assert problems("+grid=demo", "provider=sim", "provider.settings.latency.median=1") == [
        "unknown key provider.settings.latency.median; did you mean provider.settings.latency.median_s?"]


def test_unreadable_overrides_and_no_grid() -> None:
    assert problems("run.workers") == ["cannot read override 'run.workers': write key=value (see --help)"]
    assert problems()[0].startswith("no grid chosen; run e.g. `python -m bargain_ray +grid=demo`")


def test_a_game_knob_out_of_range_is_refused_by_its_family() -> None:
    assert problems("+grid=c3_smoke", "games.tickets.max_turns=-5")[0].startswith("games.tickets.max_turns=-5: ")


def test_a_long_bad_value_is_cut_as_a_resume_refusal_cuts_it() -> None:
    """One spelling of a value in every one-line message (``core.display.show``): 60 characters, then "…"."""
    found = problems("+grid=c3_smoke", f"run.workers={'x' * 100}")
    assert found == [f"run.workers={'x' * 59}…: should be a valid integer, unable to parse string as an integer"]
