"""A process composes a config once for the same inputs and files (``config.compose._COMPOSED``); these try to make
it hand back a stale or a shared answer."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from bargain_ray.config import compose_dict, conf_dir
from bargain_ray.config.compose import MAX_YAML_VALUES
from bargain_ray.config.errors import ConfigError


def test_an_edit_that_keeps_the_size_and_the_time_is_seen_by_the_next_composition(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    grid = tmp_path / "conf" / "grid" / "mine.yaml"
    grid.parent.mkdir(parents=True)
    packaged = (conf_dir() / "grid" / "demo.yaml").read_text()
    grid.write_text(packaged.replace("blocks: 3", "blocks: 4"))
    stamp = grid.stat().st_mtime_ns
    assert compose_dict("config", ["+grid=mine"])["grid"]["blocks"] == 4
    grid.write_text(packaged.replace("blocks: 3", "blocks: 5"))  # same size, and the same time stamp below
    os.utime(grid, ns=(stamp, stamp))
    assert compose_dict("config", ["+grid=mine"])["grid"]["blocks"] == 5
    grid.write_bytes(b"grid: [\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        compose_dict("config", ["+grid=mine"])
    grid.write_text(packaged.replace("blocks: 3", "blocks: 6"))
    assert compose_dict("config", ["+grid=mine"])["grid"]["blocks"] == 6


def test_a_caller_that_changes_its_config_changes_no_other_callers(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    first = compose_dict("config", ["+grid=demo"])
    first["grid"]["blocks"] = 99
    first["run"].clear()
    again = compose_dict("config", ["+grid=demo"])
    assert again["grid"]["blocks"] == 3 and again["run"]


def test_the_same_mistake_is_refused_each_time_with_the_same_line(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    lines = []
    for _ in range(2):
        with pytest.raises(ConfigError) as refused:
            compose_dict("config", ["+grid=dmeo"])
        lines.append(str(refused.value))
    assert lines[0] == lines[1] and "did you mean +grid=demo?" in lines[0]


def laughs(levels: int) -> str:
    """A grid whose aliases each name nine of the level below: 9 ** levels values from a few hundred bytes."""
    lines = ["# @package _global_", "x0: &x0 [" + ", ".join(["lol"] * 9) + "]"]
    lines += [f"x{i}: &x{i} [" + ", ".join([f"*x{i - 1}"] * 9) + "]" for i in range(1, levels + 1)]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(("name", "text"), [("bomb", laughs(9)), ("loop", "# @package _global_\nx: &a [1, *a]\n")])
def test_yaml_whose_aliases_expand_past_the_bound_is_refused_in_one_line(
        name: str, text: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A billion-laughs grid in ./conf/grid spun Hydra for minutes with no output (or ended in a bare
    ``ConfigCompositionException``); one aliased inside itself ended in a RecursionError."""
    monkeypatch.chdir(tmp_path)
    grid = tmp_path / "conf" / "grid" / f"{name}.yaml"
    grid.parent.mkdir(parents=True)
    grid.write_text(text)
    with pytest.raises(ConfigError) as refused:
        compose_dict("config", [f"+grid={name}"])
    assert refused.value.problems == [f"conf/grid/{name}.yaml: its YAML aliases expand to more than "
                                      f"{MAX_YAML_VALUES:,} values; write the values out, or use fewer aliases"]


def test_yaml_whose_aliases_stay_within_the_bound_composes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    grid = tmp_path / "conf" / "grid" / "small.yaml"
    grid.parent.mkdir(parents=True)
    grid.write_text(laughs(4))  # 9 ** 4 values: 6,561
    assert len(compose_dict("config", ["+grid=small"])["x4"][0][0][0]) == 9


VALUE_CASES = [
    ["+grid=c3_smoke", "provider=sim", "run.dir=/tmp/a", "provider.settings.base_url=http://127.0.0.1:1",
     "grid.blocks=3", "run.max_cost_usd=2.5", "games.tickets.max_turns=4"],
    ["+grid=demo", "grid.seeds=[1,2,3]", "provider.settings.limits={requests_per_minute: 5}", "run.workers=2"],
    ["+grid=demo", "run.dir=/tmp/a", "run.dir=/tmp/b"],  # the same key twice: Hydra composes it all
    ["+grid=demo", "~run.dir", "run.dir=/tmp/c"],  # a key deleted and set: ordered by Hydra
    ["+grid=demo", "+run.extra=1", "run.dir=/tmp/d"],
    ["+grid=c3_smoke", "model@models.O=claude-haiku-5-5", "models.O.max_tokens=77"],
    ["+grid=demo", "run.max_cost=5"],  # no such key: Hydra's line
    ["+grid=demo", "run=5"],
    ["+grid=demo", "run.dir=a,b"],  # a sweep: Hydra refuses it in a run
    ["+grid=demo", "+run.dir=/tmp/e"],  # an addition of a key that is there
    ["+grid=nope", "run.dir=/tmp/f"],
    ["+grid=demo", "grid.blocks"],  # no value: Hydra cannot read it
]


def _as_hydra_composes(overrides: list[str]):
    from bargain_ray.config.compose import _compose_anew

    out = _compose_anew(overrides, "config", False)
    return out if isinstance(out, list) else OmegaConf.to_container(out[0])


def _as_composed(overrides: list[str]):
    from bargain_ray.config.compose import _compose

    try:
        return OmegaConf.to_container(_compose(overrides)[0])
    except ConfigError as exc:
        return exc.problems


@pytest.mark.parametrize("overrides", VALUE_CASES, ids=[" ".join(c) for c in VALUE_CASES])
def test_values_applied_to_a_composition_give_what_hydra_composes_from_all_of_them(overrides: list[str]) -> None:
    """A composition is kept for its group choices and other settings, and plain values are applied to a copy with
    Hydra's own function: the config (or the refusal) is Hydra's own from every override at once, twice (the second
    from the kept composition)."""
    expected = _as_hydra_composes(overrides)
    assert _as_composed(overrides) == expected
    assert _as_composed(overrides) == expected
