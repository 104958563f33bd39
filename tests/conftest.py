"""Shared fixtures: one local Ray instance for the whole session, and finished sweep folders to copy.

The suite runs on two pytest-xdist workers (``addopts`` in pyproject.toml), each its own session: each starts its
own Ray once, so a test that reads its cluster's actors, or kills one, never meets the other worker's sweeps."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
import ray

from bargain_ray.core.secrets import environ_without_keys
from bargain_ray.execution.cluster import RayChoice, start_ray

LONGEST_FIRST = ("execution/test_actor_death.py", "execution/test_cluster.py", "execution/test_multinode.py",
                 "execution/test_signals.py", "execution/test_chaos.py", "execution/test_sweep.py",
                 "providers/test_masking.py", "analysis/test_report.py", "providers/test_local_model.py",
                 "execution/test_batch.py", "analysis/test_view.py", "test_install.py", "execution/test_durability.py",
                 "clients/test_clients.py", "providers/test_keys.py", "execution/test_budget.py",
                 "analysis/test_drift.py")
"""The files that take longest (``--durations=0``, summed per file), handed to the workers first: the two end
together instead of one finishing a long file alone (xdist gives out whole files in collection order, with
``--no-loadscope-reorder`` in pyproject.toml)."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def rank(item: pytest.Item) -> int:
        path = item.path.as_posix()
        return next((i for i, name in enumerate(LONGEST_FIRST) if path.endswith(name)), len(LONGEST_FIRST))

    items.sort(key=rank)  # stable: every other file, and the tests inside a file, keep their order


@pytest.fixture(scope="session")
def ray_session():
    """Start Ray once per session; subprocess sweeps join it through RAY_ADDRESS. It is started as a run starts a
    new local instance (``start_ray``: lean, with no autoscaler monitor, log monitor or API server, three Python
    processes that nothing here reads and that poll all session long; the standard way should Ray's internals
    differ; no key in its processes' environment, so a developer's real keys never reach them)."""
    if not ray.is_initialized():
        start_ray(RayChoice(how="new"))
    address = ray.get_runtime_context().gcs_address
    yield address
    ray.shutdown()


@pytest.fixture
def sweep_env(ray_session: str) -> dict[str, str]:
    """Environment for a ``python -m bargain_ray`` subprocess that joins the session's Ray."""
    env = environ_without_keys()
    env["RAY_ADDRESS"] = ray_session
    env["PYTHONUNBUFFERED"] = "1"
    return env


@pytest.fixture(scope="session")
def finished_sweep(ray_session: str, tmp_path_factory: pytest.TempPathFactory) -> Callable[[list[str], Path], Path]:
    """``finished_sweep(args, dest)``: ``dest`` holds a copy of the sweep folder that ``python -m bargain_ray *args``
    finishes. Each distinct ``args`` is played once per session, in-process (the CLI's ``main``, on the session's
    Ray), for the tests that only need a finished folder to start from; each test gets its own copy to change."""
    from bargain_ray.__main__ import main

    played: dict[tuple[str, ...], Path] = {}

    def copy(args: list[str], dest: Path) -> Path:
        key = tuple(args)
        if key not in played:
            folder = tmp_path_factory.mktemp("finished") / "sweep"
            assert main([*args, f"run.dir={folder}"]) == 0, f"the sweep {args} did not finish"
            played[key] = folder
        shutil.copytree(played[key], dest)
        return dest

    return copy


ORANGE = ("+grid=orange", "provider=sim", "grid.blocks=3", "run.progress=false", "run.report=false")
"""An orange rehearsal: 12 games (orange and battery, OOO and HHO, 3 blocks), its observer reading exactly."""
JUDGE = ("provider=sim", "provider.settings.misread=0.3", "provider.settings.batch.delay_s=0.3", "run.progress=false",
         "run.batch.max_wait_s=0.2", "run.batch.poll_s=0.2")
"""The judge of it: the simulated observers misread 3 reads in 10 (ours), batches ending fast."""


@pytest.fixture(scope="session")
def judged_sweep(finished_sweep: Callable[[list[str], Path], Path],
                 tmp_path_factory: pytest.TempPathFactory) -> Callable[[Path], tuple[Path, str, dict[str, str]]]:
    """``judged_sweep(dest)``: (``dest``, the judge's output, the digest of every file of the sweep before it was
    judged): a copy of the orange rehearsal judged once per session, in-process, by the default panel (the game's
    observer and gpt-5-mini, two repeats, swapped too)."""
    import contextlib
    import io

    from bargain_ray.core.hashing import file_digest
    from bargain_ray.judge import main

    judged: list[tuple[Path, str, dict[str, str]]] = []

    def copy(dest: Path) -> tuple[Path, str, dict[str, str]]:
        if not judged:
            folder = finished_sweep(list(ORANGE), tmp_path_factory.mktemp("judged") / "sweep")
            before = {str(p.relative_to(folder)): file_digest(p) for p in folder.rglob("*") if p.is_file()}
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                assert main([str(folder), *JUDGE]) == 0, out.getvalue()
            judged.append((folder, out.getvalue(), before))
        folder, out, before = judged[0]
        shutil.copytree(folder, dest)
        return dest, out, before

    return copy
