"""A process composes a config once for the same inputs and files (``config.compose._COMPOSED``); these try to make
it hand back a stale or a shared answer."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bargain_ray.config import compose_dict, conf_dir
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
