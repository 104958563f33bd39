"""The package as a user installs it and runs it: the configs live in the repository's ``conf/``, ship inside the
wheel, and compose the same sweeps from the repository root, from any other directory and from an installed wheel."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import polars as pl
import pytest
from helpers import ROOT

FINGERPRINTS = """
import json
from bargain_ray.config import choices, compose_dict, conf_dir
from bargain_ray.core.hashing import digest
from bargain_ray.design import resolve
from bargain_ray.design.units import units

out = {"conf": str(conf_dir())}
for grid in sorted(choices("grid")):
    for provider in ("default", "sim"):
        sweep = resolve(compose_dict("config", [f"+grid={grid}", f"provider={provider}"]))
        out[f"{grid} provider={provider}"] = {
            "components": digest(sweep.components), "units": digest([u.hash for u in units(sweep, "20260101")]),
            "local_conf": [f.path for f in sweep.config.local_conf]}
print(json.dumps(out))
"""
"""Per shipped grid and provider: the digest of its fingerprint, of its unit hashes, and the ./conf files it read."""


def fingerprints(python: Path | str, cwd: Path, env: dict[str, str]) -> dict[str, object]:
    run = subprocess.run([str(python), "-c", FINGERPRINTS], cwd=cwd, env=env, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


@pytest.fixture(scope="module")
def wheel_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv holding the package installed from a wheel built from this checkout (its dependencies come from this
    interpreter's site-packages; the venv needs no pip of its own: this interpreter's pip installs into it)."""
    where = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(where / "dist"), str(ROOT)],
                   check=True, capture_output=True)
    (wheel,) = (where / "dist").glob("bargain_ray-*.whl")
    venv = where / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(venv)], check=True)
    subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "-q",
                    "--no-deps", str(wheel)], check=True, capture_output=True)
    return venv


def without_path(env: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k != "PYTHONPATH"}


def test_the_root_another_directory_and_a_wheel_compose_the_same_sweeps(wheel_venv, tmp_path, sweep_env):
    env = without_path(sweep_env)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    at_root = fingerprints(sys.executable, ROOT, env)
    from_elsewhere = fingerprints(sys.executable, elsewhere, env)
    from_wheel = fingerprints(wheel_venv / "bin" / "python", elsewhere, env)
    assert at_root.pop("conf") == from_elsewhere.pop("conf") == str(ROOT / "conf")  # the checkout's one copy
    assert Path(str(from_wheel.pop("conf"))).is_relative_to(wheel_venv)  # the copy the wheel carries
    assert at_root == from_elsewhere == from_wheel
    assert len(at_root) == 2 * len(list((ROOT / "conf" / "grid").glob("*.yaml")))
    # at the root, ./conf is the packaged folder itself, never recorded as the user's own files
    assert all(entry["local_conf"] == [] for entry in at_root.values())  # type: ignore[index]


def test_the_wheel_carries_every_config_and_runs_the_demo_from_another_directory(wheel_venv, tmp_path, sweep_env):
    python = wheel_venv / "bin" / "python"
    env = without_path(sweep_env)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    where = subprocess.run([str(python), "-c", "import bargain_ray; print(bargain_ray.__file__)"], cwd=elsewhere,
                           env=env, capture_output=True, text=True, check=True).stdout.strip()
    assert Path(where).is_relative_to(wheel_venv), where  # the installed copy, not the checkout
    shipped = {p.relative_to(Path(where).parent / "conf") for p in (Path(where).parent / "conf").rglob("*.yaml")}
    assert shipped == {p.relative_to(ROOT / "conf") for p in (ROOT / "conf").rglob("*.yaml")}
    run = subprocess.run([str(python), "-m", "bargain_ray", "+grid=demo", "run.report=false", "run.progress=false"],
                         cwd=elsewhere, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert pl.read_parquet(elsewhere / "outputs" / "demo" / "games.parquet").height == 60


def test_the_repository_keeps_one_copy_of_the_configs():
    assert (ROOT / "conf" / "config.yaml").is_file()
    assert not (ROOT / "src" / "bargain_ray" / "conf").exists()
    assert "outputs/" in (ROOT / ".gitignore").read_text().splitlines()


def test_the_cluster_image_copies_all_a_wheel_is_built_from(tmp_path):
    """jobs/Dockerfile builds the package from what it COPYs: a wheel built from just those paths carries every
    config (no Docker engine runs here, so the build is checked from the same files)."""
    copied = [word for line in (ROOT / "jobs" / "Dockerfile").read_text().splitlines() if line.startswith("COPY ")
              for word in line.split()[1:-1] if not word.startswith("--")]
    context = tmp_path / "context"
    for name in copied:
        source, target = ROOT / name, context / name
        if source.is_dir():
            shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(source, target)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path / "dist"),
                    str(context)], check=True, capture_output=True)
    (wheel,) = (tmp_path / "dist").glob("bargain_ray-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        shipped = {name.removeprefix("bargain_ray/conf/") for name in archive.namelist()
                   if name.startswith("bargain_ray/conf/")}
    assert shipped == {p.relative_to(ROOT / "conf").as_posix() for p in (ROOT / "conf").rglob("*.yaml")}
