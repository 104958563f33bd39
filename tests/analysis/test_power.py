"""Power planning (``python -m bargain_ray.plan``) checked against pilots whose true variance is known.

``conf/grid/power_pilot.yaml`` plays seller strategy N, whose every claim in a game is its cost plus one N(0, 10)
draw seeded by its brief; the brief differs between the two conditions and nothing else does (strategies read
neither claims nor the objective sentence). So a game's ``seller_self_serving_bias`` is its draw, and the paired
difference default - explicit_objective of one block has SD 10 sqrt(2) exactly: the truth the plans are held to.
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
from scipy import stats

from bargain_ray.__main__ import main as sweep_main
from bargain_ray.analysis.build import analyse
from bargain_ray.analysis.intervals import MIN_SEEDS
from bargain_ray.analysis.power import FACTORS, Pilot, PlanError, Side, split_contrast
from bargain_ray.analysis.sweep import read_sweep
from bargain_ray.plan import main

METRIC = "seller_self_serving_bias"
CONTRAST = "default-explicit_objective"
TRUE_SD = 10 * math.sqrt(2)
"""The SD between blocks of the paired difference, by construction (2-decimal rounding adds 1e-6 of it)."""
PILOTS, PILOT_BLOCKS, TARGET = 20, MIN_SEEDS, 8.0
"""Twenty pilots of 10 blocks (20 strategy games each), planned for a half-width of 8, which about one pilot in five
reaches on its own (its SD drawn low): the others grow to about 20 blocks."""
QUIET = ["run.report=false", "run.progress=false"]


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
    """The half-width the report shows for the contrast (its paired difference's interval)."""
    paired = analyse(read_sweep(folder)).paired
    row = paired.filter((pl.col("metric") == METRIC) & (pl.col("factor") == "condition"))
    assert row.height == 1, row
    return (row["ci_high"][0] - row["ci_low"][0]) / 2


def test_planned_sweeps_reach_the_target_from_at_least_80_percent_of_20_independent_pilots(
        ray_session, tmp_path: Path, capsys, record_property) -> None:
    """Twenty pilots on twenty grid seeds (hashed block seeds: no two share a draw), each planned and grown by the
    command the plan prints, copied as printed: at least 16 of the grown folders reach the target half-width (a
    plan that takes the pilot's SD as the truth reaches it about half the time). The hit rate and the planned
    blocks are recorded as the test's properties (``--junitxml``)."""
    reached, planned = [], []
    for i in range(PILOTS):
        folder = tmp_path / f"pilot{i}"
        assert sweep_main(["+grid=power_pilot", f"grid.seed={1000 + i}", f"grid.blocks={PILOT_BLOCKS}",
                           f"run.dir={folder}", *QUIET]) == 0
        code, out, err = plan(capsys, folder, "--metric", METRIC, "--contrast", CONTRAST, "--target-halfwidth", TARGET)
        assert code == 0, err
        blocks = int(re.search(r"blocks needed: (\d+) for a 95% half-width of 8 with assurance 0.8", out)[1])
        command = re.search(r"^design: .*: python -m bargain_ray (.*)$", out, re.M)[1]
        assert f"grid.blocks={blocks}" in command and f"run.dir={folder}" in command
        assert sweep_main([*shlex.split(command), *QUIET]) == 0
        games = pl.read_parquet(folder / "games.parquet")
        assert games.height == 2 * blocks and games["seed"].n_unique() == blocks  # the pilot's games kept, grown
        reached.append(achieved_halfwidth(folder) <= TARGET)
        planned.append(blocks)
    record_property("hit_rate", sum(reached) / PILOTS)
    record_property("planned_blocks", planned)
    assert sum(reached) >= 0.8 * PILOTS, (reached, planned)


def test_an_effect_is_found_with_the_planned_power() -> None:
    """Blocks for an effect D at power P, from pilots of 20 seeds whose SD is itself an estimate: over many
    pilots, the planned experiments (simulated with the true SD) find the effect at about the planned rate or more,
    where planning on the pilot's SD as known falls short."""
    rng = np.random.default_rng(0)
    side = Side(factor="condition", value="x", matched=["x"], cells=["x"])
    found, naive_found = [], []
    for _ in range(200):
        sd = float(rng.normal(0, TRUE_SD, 20).std(ddof=1))
        pilot = Pilot(metric=METRIC, a=side, b=side, blocks=20, seeds=20, dropped=0, mean=0.0, sd=sd, low=None,
                      high=None, level=0.95)
        for blocks, out in ((pilot.blocks_for_effect(5, 0.8), found),
                            (math.ceil(((1.959964 + 0.841621) * sd / 5) ** 2), naive_found)):
            runs = rng.normal(5, TRUE_SD, size=(50, blocks))
            t = stats.t.ppf(0.975, blocks - 1)
            out.append(np.mean(np.abs(runs.mean(axis=1)) > t * runs.std(axis=1, ddof=1) / math.sqrt(blocks)))
    assert np.mean(found) >= 0.78 > np.mean(naive_found) + 0.02, (np.mean(found), np.mean(naive_found))


def test_the_plan_counts_the_pilots_uncertainty_about_its_sd() -> None:
    """The chance to reach a half-width, as the plan computes it, against many simulated grown folders."""
    rng = np.random.default_rng(1)
    side = Side(factor="condition", value="x", matched=["x"], cells=["x"])
    pilot_values = rng.normal(0, 1, 12)
    pilot_values *= TRUE_SD / pilot_values.std(ddof=1)  # its SD the truth's: 12 blocks reach a half-width of 8.98
    pilot = Pilot(metric=METRIC, a=side, b=side, blocks=12, seeds=12, dropped=0, mean=0.0,
                  sd=float(pilot_values.std(ddof=1)), low=None, high=None, level=0.95)
    blocks = pilot.blocks_for_halfwidth(8, 0.8)
    assert blocks > 12 and pilot.reach(blocks, 8) >= 0.8 > pilot.reach(blocks - 1, 8)
    # given the pilot, its chance is the sweep's chance averaged over what the pilot knows of sigma (fiducial draws)
    sigma = pilot.sd * np.sqrt(11 / rng.chisquare(11, 4000))
    grown = np.concatenate([np.tile(pilot_values, (4000, 1)),
                            rng.normal(0, 1, (4000, blocks - 12)) * sigma[:, None]], axis=1)
    half = pilot.t(blocks) * grown.std(axis=1, ddof=1) / math.sqrt(blocks)
    assert np.mean(half <= 8) == pytest.approx(pilot.reach(blocks, 8), abs=0.03)


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
    assert "X/Y is an F ratio" in shown.stdout and "--assurance" in shown.stdout


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


def test_a_rehearsal_pilot_is_planned_with_its_prices_and_a_command_that_grows_its_own_folder(
        finished_sweep, tmp_path: Path, capsys) -> None:
    """A pilot on the simulated provider (its replies drawn around each strategy, so seeds spread) is planned like
    any: the command names provider=sim and the pilot's run.dir, the dry run prices the new units from the pilot's
    measured tokens at the configured prices, and the plan says it is a rehearsal; nothing ends in a traceback."""
    folder = finished_sweep(["+grid=c3_smoke", "provider=sim", "provider.settings.reply_noise=0.3", "grid.blocks=3",
                             "run.report=false"], tmp_path / "sim")
    code, out, err = plan(capsys, folder, "--metric", "gain_buyer", "--contrast", "OH-HH", "--target-halfwidth", 2)
    assert code == 0, err
    blocks = int(re.search(r"blocks needed: (\d+) for a 95% half-width of 2 ", out)[1])
    command = re.search(r"^design: .*: python -m bargain_ray (.*)$", out, re.M)[1]
    assert shlex.split(command) == ["+grid=c3_smoke", "provider=sim", f"grid.blocks={blocks}", f"run.dir={folder}"]
    assert "rehearsal: the pilot played the simulated provider (provider=sim)" in out
    assert f"grid c3_smoke: {16 * blocks} units, 48 finished, {16 * (blocks - 3)} to run" in out
    assert "measured: calls a game and tokens a call of each game, model and role from the 48 finished games" in out
    assert re.search(r"estimated total: ~\$[1-9][\d.]*; upper bound \$[\d.]+", out), out  # configured prices, not $0
