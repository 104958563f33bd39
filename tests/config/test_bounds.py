"""Every value bounded, every file read safely: NaN, infinity, a seed past 64 bits, a game too long or a grid too
big to plan, an unknown strategy, a negative rate, a YAML that is not UTF-8 or not YAML: one line, exit 1, and the
sweep folder untouched."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import ROOT

from bargain_ray.__main__ import main
from bargain_ray.config import Price
from bargain_ray.execution import sweep
from bargain_ray.providers.sim import SimSettings

INT64_MAX = 2**63 - 1


@pytest.fixture
def no_sweep(monkeypatch: pytest.MonkeyPatch) -> None:
    def reached(*_: object) -> int:
        raise AssertionError("the sweep started")

    monkeypatch.setattr(sweep, "run_sweep", reached)


@pytest.mark.parametrize(("overrides", "says"), [
    (["provider=sim", "provider.settings.batch.delay_s=nan"], "provider.settings.batch.delay_s=nan: should be a finite number"),
    ([f"grid.seed={INT64_MAX}"], f"grid.seed={INT64_MAX}: must be <= {INT64_MAX - 100_000}"),
    ([f"grid.seeds=[{INT64_MAX + 1}]"], f"grid.seeds.0={INT64_MAX + 1}: must be <= {INT64_MAX}"),
    (["games.tickets.max_turns=100000000000"], "games.tickets.max_turns=100000000000: must be <= 1000"),
    (["provider=sim", "provider.settings.strategies.claude-opus-5-5=nonsense"],
     "provider.settings.strategies.claude-opus-5-5=nonsense: should be 'boulware', 'conceder' or 'linear'"),
    (["models.O.price.output=inf"], "models.O.price.output=inf: should be a finite number"),
    (["provider=sim", "provider.settings.limits.tokens_per_minute=-5"],
     "provider.settings.limits.tokens_per_minute=-5: must be >= 0.1"),
    (["models.O.limits.requests_per_minute=inf"], "models.O.limits.requests_per_minute=inf: should be a finite number"),
    (["run.max_cost_usd=nan"], "run.max_cost_usd=nan: should be a finite number"),
    (["games.tickets.terms.0.min=-inf"], "games.tickets.terms.0.min=-inf: should be a finite number"),
    (["provider=local", "provider.settings.startup_timeout_s=inf"],
     "provider.settings.startup_timeout_s=inf: should be a finite number"),
    (["provider=sim", "provider.settings.batch.errored=2"], "provider.settings.batch.errored=2: must be <= 1"),
    (["grid.blocks=20000"], "grid.blocks=20000: 320000 units (16 cells a block) is more than one sweep plans"),
    (["games.tickets.decimals=1000000000"], "games.tickets.decimals=1000000000: must be <= 6"),
    (["run.batch.poll_s=1e308"], "run.batch.poll_s=1e+308: must be <= 600"),
    (["run.batch.max_wait_s=1e308"], "run.batch.max_wait_s=1e+308: must be <= 600"),
    (["models.O.retry.max_s=1e308"], "models.O.retry.max_s=1e+308: must be <= 600"),
    (["models.O.retry.initial_s=1e308"], "models.O.retry.initial_s=1e+308: must be <= 600"),
    (["models.O.retry.timeout_s=1e308"], "models.O.retry.timeout_s=1e+308: must be <= 3600"),
    (["models.O.retry.max_attempts=1000000000"], "models.O.retry.max_attempts=1000000000: must be <= 100"),
    (["models.O.limits.requests_per_minute=1e-300"], "models.O.limits.requests_per_minute=1e-300: must be >= 0.1"),
    (["models.O.limits.output_tokens_per_minute=0"], "models.O.limits.output_tokens_per_minute=0: must be >= 0.1"),
    (["models.O.price.input=1e308"], "models.O.price.input=1e+308: must be <= 10000"),
    (["provider=sim", "provider.settings.latency.median_s=1e308"],
     "provider.settings.latency.median_s=1e+308: must be <= 600"),
    (["provider=sim", "provider.settings.reply_noise=1e308"], "provider.settings.reply_noise=1e+308: must be <= 10"),
    (["provider=sim", "provider.settings.timeout_sleep_s=1e308"],
     "provider.settings.timeout_sleep_s=1e+308: must be <= 600"),
])
def test_each_unbounded_value_is_one_line_before_the_folder(overrides: list[str], says: str, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str], no_sweep: None) -> None:
    folder = tmp_path / "sweep"
    assert main(["+grid=c3_smoke", *overrides, f"run.dir={folder}"]) == 1
    out = capsys.readouterr()
    assert out.err.startswith(f"error: {says}") and out.err.count("\n") == 1 and out.out == "", out.err
    assert not folder.exists()


def test_a_game_of_any_family_is_bounded_in_turns(capsys: pytest.CaptureFixture[str], no_sweep: None) -> None:
    assert main(["+grid=scorable_demo", "games.scorable6.rounds=500"]) == 1
    assert "rounds=500 of 6 parties is 3000 turns; a game plays at most 1000" in capsys.readouterr().err
    assert main(["+grid=bargaining_demo", "games.bargaining.max_rounds=5000"]) == 1
    assert "games.bargaining.max_rounds=5000: must be <= 1000" in capsys.readouterr().err


def test_models_built_outside_a_config_refuse_nan_too() -> None:
    """The schemas' own base (``config.Strict``) refuses NaN and infinity: the sim's settings and a price alike."""
    with pytest.raises(ValueError, match="finite number"):
        SimSettings(batch={"delay_s": math.nan})
    with pytest.raises(ValueError, match="finite number"):
        Price(output=math.inf)


@pytest.mark.parametrize(("text", "says"), [
    (b"grid:\n  name: caf\xe9\n", "conf/grid/mine.yaml: not UTF-8 (byte 17 is 0xe9); save the file as UTF-8"),
    (b"grid: [\n", "conf/grid/mine.yaml:2:1: not valid YAML (expected the node content, but found '<stream end>')"),
])
def test_a_local_yaml_that_cannot_be_read_is_one_line(text: bytes, says: str, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str], no_sweep: None) -> None:
    (tmp_path / "conf" / "grid").mkdir(parents=True)
    (tmp_path / "conf" / "grid" / "mine.yaml").write_bytes(text)
    monkeypatch.chdir(tmp_path)
    assert main(["+grid=mine"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and says in err and err.count("\n") == 1, err


@pytest.fixture
def read_only(tmp_path: Path):
    """A real read-only filesystem (a tmpfs remounted ro: root passes permission checks, not a ro mount)."""
    mount = tmp_path / "ro"
    mount.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)], capture_output=True).returncode:
        pytest.skip("no tmpfs can be mounted here")
    (mount / "sweep").mkdir()
    subprocess.run(["mount", "-o", "remount,ro", str(mount)], check=True)
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=True)


def test_a_read_only_sweep_folder_is_one_line(read_only: Path, tmp_path: Path) -> None:
    for folder in (read_only / "sweep", read_only / "new"):
        done = subprocess.run([sys.executable, "-m", "bargain_ray", "+grid=demo", f"run.dir={folder}"], cwd=ROOT,
                              capture_output=True, text=True, timeout=120, env={"PATH": "/usr/bin:/bin"})
        assert done.returncode == 1 and done.stdout == "", done.stderr
        assert done.stderr == (f"error: {folder} cannot be written (Read-only file system); nothing was run. "
                               "Make it writable, or choose another folder with run.dir=<path>.\n")


def test_a_sweep_config_built_by_hand_is_held_to_the_same_bounds() -> None:
    """``run_sweep`` resolves a bare ``SweepConfig`` as the command line would: NaN in a game config is refused."""
    from bargain_ray.config import SweepConfig, compose_dict
    from bargain_ray.config.errors import ConfigError
    from bargain_ray.design import resolve

    config = SweepConfig.model_validate(compose_dict("config", ["+grid=c3_smoke", "games.tickets.terms.0.min=nan"]))
    with pytest.raises(ConfigError) as caught:
        resolve(config)
    assert caught.value.problems == ["games.tickets.terms.0.min=nan: should be a finite number"]


def test_a_price_grid_of_any_family_is_bounded_in_decimals(capsys: pytest.CaptureFixture[str], no_sweep: None) -> None:
    assert main(["+grid=bargaining_demo", "games.bargaining.decimals=7"]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err and all(line.startswith("error: games.bargaining.decimals=7: must be <= 6") for line in err), err
