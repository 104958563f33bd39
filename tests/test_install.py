"""The package as a user installs it: non-editable, conf/ inside it, run from any directory."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import polars as pl
from helpers import ROOT


def test_a_non_editable_install_runs_the_demo_from_another_directory(tmp_path, sweep_env):
    venv = tmp_path / "venv"
    # The dependencies come from this interpreter's site-packages; bargain_ray itself is built and installed
    # into the venv by this interpreter's pip (``--python``: the venv needs no pip of its own, 4 s less).
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", str(ROOT)],
                   check=True, capture_output=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in sweep_env.items() if k != "PYTHONPATH"}
    where = subprocess.run([str(python), "-c", "import bargain_ray; print(bargain_ray.__file__)"], cwd=elsewhere,
                           env=env, capture_output=True, text=True, check=True).stdout.strip()
    assert Path(where).is_relative_to(venv), where  # the installed copy, not the checkout
    run = subprocess.run([str(python), "-m", "bargain_ray", "+grid=demo", "run.report=false", "run.progress=false"],
                         cwd=elsewhere, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert pl.read_parquet(elsewhere / "outputs" / "demo" / "games.parquet").height == 60
