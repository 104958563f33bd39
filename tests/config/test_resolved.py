"""One resolved sweep: the command line and the public API check a config on one path, and what they build is
typed all through (family configs, provider settings, the models as called) and crosses to the workers as JSON."""

from __future__ import annotations

import pytest

import bargain_ray
from bargain_ray.__main__ import main
from bargain_ray.config.errors import ConfigError
from bargain_ray.design import ResolvedSweep, load_config
from bargain_ray.games.bargaining.config import BargainingConfig
from bargain_ray.games.multi_issue.config import MultiIssueConfig
from bargain_ray.providers.local import LocalSettings
from bargain_ray.providers.sim import SimSettings


@pytest.mark.parametrize("overrides", [
    ["run.workers=0"],  # the sweep's own schema
    ["games.tickets.max_turns=abc"],  # the family's schema
    ["provider=sim", "provider.settings.faults.drop=2"],  # the sim's settings
    ["provider=local", "provider.settings.threads=0"],  # the local model's settings
    ["provider=local", "provider.settings.thread=2"],  # a key the local settings do not have
    ["models.O.max_token=5"],  # a key Hydra would refuse in its own words
])
def test_the_public_api_refuses_what_the_command_line_refuses_with_the_same_line(
        overrides: list[str], tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["+grid=c3_smoke", *overrides, f"run.dir={tmp_path / 's'}"]) == 1
    printed = capsys.readouterr().err.splitlines()
    with pytest.raises(ConfigError) as caught:
        bargain_ray.load_config("c3_smoke", [*overrides, f"run.dir={tmp_path / 's'}"])
    assert [f"error: {line}" for line in caught.value.problems] == printed and printed
    assert not (tmp_path / "s").exists()


def test_every_part_is_typed_once() -> None:
    sweep = load_config("mixed_demo", ["provider=sim"])
    assert isinstance(sweep.provider.settings, SimSettings)
    kinds = {type(c) for c in sweep.game_configs.values()}
    assert {MultiIssueConfig, BargainingConfig} <= kinds
    assert sweep.game("tickets", "C3").config is sweep.game_configs["game tickets under condition C3"]
    c3 = load_config("c3_smoke", ["provider=sim"])
    assert {m.provider for m in c3.models.values()} == {"sim"}  # as this run calls them
    assert {m.provider for m in c3.config.models.values()} == {"anthropic"}  # as configured
    local = load_config("c3_smoke", ["provider=local"])
    assert isinstance(local.provider.settings, LocalSettings)
    assert {m.name for m in local.models.values()} == {local.provider.settings.name}


def test_the_sim_knows_each_models_api_from_its_own_provider() -> None:
    sweep = load_config("c3_smoke", ["provider=sim", "+provider.settings.apis.claude-haiku-5-5=openai"])
    assert sweep.provider.settings.apis == {"claude-opus-5-5": "anthropic", "claude-haiku-5-5": "openai"}


def test_the_resolved_sweep_crosses_as_json_and_reads_back_as_it_was() -> None:
    sweep = load_config("mixed_demo", ["provider=sim"])
    again = ResolvedSweep.model_validate_json(sweep.model_dump_json())
    assert again == sweep and again.components == sweep.components
    served = sweep.served_at("http://127.0.0.1:9")
    assert served.provider.settings.base_url == "http://127.0.0.1:9" and sweep.provider.settings.base_url is None


def test_a_key_a_family_or_a_provider_schema_knows_is_added_and_checked_by_that_schema() -> None:
    """Hydra alone refuses a key the YAML leaves out; the resolver's schemas know each game's and provider's keys."""
    sweep = load_config("c3_smoke", ["provider=local", "provider.settings.base_url=http://127.0.0.1:9/v1",
                                     "games.tickets.decimals=3"])
    assert sweep.provider.settings.base_url == "http://127.0.0.1:9/v1"
    assert sweep.game_configs["game tickets under condition C3"].decimals == 3
    with pytest.raises(ConfigError) as caught:
        load_config("c3_smoke", ["games.tickets.decimalz=3", "provider=sim", "provider.settings.latency.median=1"])
    assert caught.value.problems == [
        "unknown key games.tickets.decimalz; did you mean games.tickets.decimals?",
        "unknown key provider.settings.latency.median; did you mean provider.settings.latency.median_s?"]
