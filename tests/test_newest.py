"""The package installed as a researcher installs it, beside the newest release of every runtime dependency that
``pyproject.toml``'s ranges allow (resolved from the package registry, never from ``constraints.txt``): it imports
and plays a sweep. CI tests the lower bounds (``constraints.txt`` holds them); this tests the upper end.

It needs the package registry and a few minutes, and its outcome moves with the registry (a new release can break it
on a day nothing here changed), so it runs only when asked: ``BARGAIN_RAY_NEWEST=1 python -m pytest -n 0
tests/test_newest.py``. Run it before widening a range and when a dependency releases."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import polars as pl
import pytest
from helpers import ROOT
from packaging.requirements import Requirement
from packaging.version import Version

from bargain_ray.core.secrets import environ_without_keys

pytestmark = pytest.mark.skipif(os.environ.get("BARGAIN_RAY_NEWEST") != "1",
                                reason="installs the newest allowed dependencies from the registry; BARGAIN_RAY_NEWEST=1")

PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
RUNTIME = [Requirement(line) for line in PROJECT["dependencies"]]


def newest_allowed(requirement: Requirement) -> Version:
    """The newest release of ``requirement`` on the registry that its range allows (pre-releases aside)."""
    listed = subprocess.run([sys.executable, "-m", "pip", "index", "versions", requirement.name],
                            capture_output=True, text=True, check=True, timeout=120).stdout
    line = next(x for x in listed.splitlines() if x.startswith("Available versions:"))
    versions = [Version(v) for v in line.split(":", 1)[1].split(",")]
    return max(v for v in versions if requirement.specifier.contains(v))


def installed(python: Path) -> dict[str, Version]:
    """Every distribution in ``python``'s environment, by normalised name, with its version."""
    code = ("import importlib.metadata as m, json; "
            "print(json.dumps({d.metadata['Name']: d.version for d in m.distributions()}))")
    found = json.loads(subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True).stdout)
    return {name.lower().replace("_", "-"): Version(version) for name, version in found.items()}


@pytest.fixture(scope="module")
def newest_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv of its own (no site packages of this interpreter) holding the package and its dependencies as pip
    resolves them today, newest first."""
    venv = tmp_path_factory.mktemp("newest") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    run = subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "-q",
                          "--upgrade-strategy", "eager", str(ROOT)], capture_output=True, text=True, timeout=1200)
    assert run.returncode == 0, run.stderr
    return venv


@pytest.mark.timeout(1800)
def test_the_newest_allowed_dependencies_install_and_play_a_sweep(newest_venv: Path, tmp_path: Path) -> None:
    python = newest_venv / "bin" / "python"
    versions = installed(python)
    assert {r.name.lower(): versions[r.name.lower()] for r in RUNTIME} == {
        r.name.lower(): newest_allowed(r) for r in RUNTIME}
    env = {k: v for k, v in environ_without_keys().items() if k not in ("PYTHONPATH", "RAY_ADDRESS")}
    where = subprocess.run([str(python), "-c", "import bargain_ray; print(bargain_ray.__file__)"], cwd=tmp_path,
                           env=env, capture_output=True, text=True, check=True).stdout.strip()
    assert Path(where).is_relative_to(newest_venv), where  # the installed copy, not the checkout
    sweep = subprocess.run([str(python), "-m", "bargain_ray", "+grid=demo", "grid.blocks=1", "run.report=false",
                            "run.progress=false", f"run.dir={tmp_path / 'demo'}"],
                           cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert sweep.returncode == 0, sweep.stdout + sweep.stderr
    games = pl.read_parquet(tmp_path / "demo" / "games.parquet")
    assert games.height == 20 and games["known"].all()
