"""Power planning (``python -m bargain_ray.plan``) checked against a pilot whose true variance is known.

``conf/grid/power_pilot.yaml`` plays seller strategy N, whose every claim in a game is its cost plus one N(0, 10)
draw seeded by its brief; the brief differs between the two conditions and nothing else does (strategies read
neither claims nor the objective sentence). So a game's ``seller_self_serving_bias`` is its draw, and the paired
difference default - explicit_objective of one block has SD 10 sqrt(2) exactly: the truth the plan is held to.
"""

from __future__ import annotations

import math
import re
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from bargain_ray.analysis.build import analyse
from bargain_ray.analysis.power import FACTORS, Pilot, PlanError, Side, split_contrast
from bargain_ray.analysis.sweep import read_sweep
from bargain_ray.plan import main

METRIC = "seller_self_serving_bias"
CONTRAST = "default-explicit_objective"
TRUE_SD = 10 * math.sqrt(2)
"""The SD between blocks of the paired difference, by construction (2-decimal rounding adds 1e-6 of it)."""
TARGET = 2.5
"""A half-width the planned design reaches in about 110 blocks (220 strategy games: well under a minute)."""


def plan(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str, str]:
    """The command's exit code, stdout and stderr (what the sweeps before it printed is dropped)."""
    capsys.readouterr()
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def pilot(finished_sweep, tmp_path: Path) -> Path:
    return finished_sweep(["+grid=power_pilot", "run.report=false"], tmp_path / "pilot")  # 50 blocks, 100 games


def achieved_halfwidth(folder: Path) -> float:
    """The half-width the report shows for the contrast: the project's paired bootstrap, not the planner's."""
    paired = analyse(read_sweep(folder)).paired
    row = paired.filter((pl.col("metric") == METRIC) & (pl.col("factor") == "condition"))
    assert row.height == 1, row
    return (row["ci_high"][0] - row["ci_low"][0]) / 2


def test_the_planned_blocks_reach_the_target_halfwidth(pilot: Path, finished_sweep, tmp_path: Path, capsys) -> None:
    """Pilot -> plan -> the planned design, run as the plan prints it -> its half-width is within 20% of the target.

    The tolerance is what the sizes allow: an SD estimated from n normal seeds is off by about 1/sqrt(2n) at
    one standard error (10% for the pilot's 50, 7% for the planned ~110), and the half-width is their ratio."""
    code, out, err = plan(capsys, pilot, "--metric", METRIC, "--contrast", CONTRAST, "--target-halfwidth", TARGET)
    assert code == 0, err
    sd = float(re.search(r"SD of A - B between seeds: .* = ([\d.]+)", out)[1])
    assert abs(sd / TRUE_SD - 1) < 0.2, (sd, out)  # the pilot's bootstrap sees the variance that is there
    blocks = int(re.search(r"blocks needed: (\d+) for a 95% half-width of 2.5", out)[1])
    ideal = (1.959964 * TRUE_SD / TARGET) ** 2
    assert abs(blocks / ideal - 1) < 0.25, (blocks, ideal)
    assert f"plan (nothing is spent in a dry run): {2 * blocks} units to play" in out  # the estimator, grown
    assert f"of which blocks 51-{blocks}, beyond the pilot's 50: {2 * (blocks - 50)} units" in out
    command = re.search(r"design: .*: python -m bargain_ray (.*)$", out, re.M)[1]
    assert command == f"+grid=power_pilot grid.blocks={blocks}"

    planned = finished_sweep([*shlex.split(command), "run.report=false"], tmp_path / "planned")
    achieved = achieved_halfwidth(planned)
    assert abs(achieved / TARGET - 1) < 0.2, (achieved, TARGET, blocks)
    games = pl.read_parquet(planned / "games.parquet")
    assert games.height == 2 * blocks
    wide = games.pivot(on="condition", index="block", values=METRIC)
    assert abs((wide["default"] - wide["explicit_objective"]).std() / TRUE_SD - 1) < 0.15  # the truth, as built


def test_an_effect_is_found_with_the_planned_power() -> None:
    """Blocks for an effect D at power P, checked by simulating experiments of that size with the known SD:
    about P of their 95% intervals exclude zero. Power 0.5 needs what a half-width of D needs."""
    pilot = Pilot(metric=METRIC, a=Side(factor="condition", value="x", matched=["x"], cells=["x"]),
                  b=Side(factor="condition", value="y", matched=["y"], cells=["y"]), blocks=50, seeds=50,
                  dropped=0, mean=0.0, low=-1.959964 * TRUE_SD / math.sqrt(50),
                  high=1.959964 * TRUE_SD / math.sqrt(50), level=0.95, resamples=2000)
    assert pilot.sd == pytest.approx(TRUE_SD)
    assert pilot.blocks_for_effect(5, 0.5) == pilot.blocks_for_halfwidth(5)
    blocks = pilot.blocks_for_effect(5, 0.8)
    assert blocks == math.ceil(((1.959964 + 0.841621) * TRUE_SD / 5) ** 2)
    rng = np.random.default_rng(0)
    runs = rng.normal(5, TRUE_SD, size=(4000, blocks))
    found = np.abs(runs.mean(axis=1)) > 1.959964 * runs.std(axis=1, ddof=1) / math.sqrt(blocks)
    assert abs(found.mean() - 0.8) < 0.03


def test_a_pilot_of_one_block_is_refused(finished_sweep, tmp_path: Path, capsys) -> None:
    folder = finished_sweep(["+grid=power_pilot", "grid.blocks=1", "run.report=false"], tmp_path / "one")
    code, out, err = plan(capsys, folder, "--metric", METRIC, "--contrast", CONTRAST, "--target-halfwidth", 1)
    assert code == 1 and not out
    assert err.count("\n") == 1 and "pilot of 1 block" in err and "grid.blocks=2" in err, err


def test_refusals_name_what_to_do(pilot: Path, capsys) -> None:
    cases = {
        ("nope", CONTRAST): ["no metric 'nope'", "known: agreement", METRIC],
        (METRIC, "default-nope"): ["names no cells", "condition: default, explicit_objective", "pairing: NL"],
        (METRIC, "default-NL"): ["two values of one factor", "condition default and pairing NL"],
        ("price", CONTRAST): ["zero variance", "provider=sim", "plan from a pilot on the real models"],
    }
    for (metric, contrast), words in cases.items():
        code, out, err = plan(capsys, pilot, "--metric", metric, "--contrast", contrast, "--effect", 1)
        assert code == 1 and not out, (metric, contrast, out)
        assert err.startswith("error: ") and err.count("\n") == 1, err
        assert all(w in err for w in words), (words, err)


def test_the_command_refuses_in_one_line_and_explains_contrasts(pilot: Path) -> None:
    run = [sys.executable, "-m", "bargain_ray.plan"]
    done = subprocess.run([*run, str(pilot), "--metric", "price", "--contrast", CONTRAST, "--effect", "1"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    shown = subprocess.run([*run, "--help"], capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0
    assert "A-B names two sides" in shown.stdout and "paired on the seeds both sides played" in shown.stdout
    assert "m = ceil((z sd / h)^2)" in shown.stdout


def frame(rows: list[tuple]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=[*FACTORS, "seed"], orient="row")


def test_a_contrast_names_cells_or_values_of_one_factor() -> None:
    f = frame([
        ("haiku-seller", "g", "default", "HL", 1, None, 1), ("haiku-buyer", "g", "default", "LH", 1, None, 1),
        ("x", "g", "explicit", "HL", 2, None, 1), ("y", "g", "explicit", "LH", 2, None, 1),
        ("HL", "g", "other", "LL", 1, None, 1),
    ])
    a, b = split_contrast(f, "haiku-seller-haiku-buyer")  # names holding '-': the one split that names two cells
    assert (a.factor, a.cells, b.cells) == ("cell", ["haiku-seller"], ["haiku-buyer"])
    a, b = split_contrast(f, "default-explicit")
    assert (a.factor, a.cells, b.cells) == ("condition", ["haiku-buyer", "haiku-seller"], ["x", "y"])
    a, b = split_contrast(f, "a1-a2")
    assert (a.factor, a.matched, b.matched) == ("assignment", ["1"], ["2"])
    a, b = split_contrast(f, "pairing=HL-pairing=LH")
    assert (a.factor, a.cells, b.cells) == ("pairing", ["haiku-seller", "x"], ["haiku-buyer", "y"])
    with pytest.raises(PlanError, match="'HL' is a value of cell and pairing: write factor=HL"):
        split_contrast(f, "HL-LH")
    with pytest.raises(PlanError, match="names no cells"):
        split_contrast(f, "default")
