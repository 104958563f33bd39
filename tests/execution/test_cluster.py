"""Which Ray a run uses, said in the plan line; a cluster that does not answer, or is lost mid-run, is one line and
exit 69 within seconds, never minutes of Ray's retries; the journals keep everything and the next run resumes.

Every Ray here is this test's own: ``ray start`` in a temporary ``--temp-dir`` with its own ports and token, and
sweeps that start a local instance under a temporary ``RAY_TMPDIR`` (where Ray also looks for a running local
cluster), so no other process on the machine is joined or disturbed.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import pytest
from helpers import DEMO_WHOLE, ROOT, complete_lines, ray_start_retried, read_undated

from bargain_ray.core.secrets import environ_without_keys
from bargain_ray.core.status import ExitCode

DEMO = ["+grid=demo", "run.progress=false", "run.report=false"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("", 0))
        return s.getsockname()[1]


def own_ray_env(base: Path) -> dict[str, str]:
    """No RAY_ADDRESS; Ray's temp dir (and so its current-cluster file) under ``base``; a token of our own."""
    token = base / "token"
    if not token.exists():
        token.write_text(os.urandom(32).hex())
    env = environ_without_keys(("RAY_ADDRESS", "RAY_AUTH_TOKEN"))
    return env | {"RAY_TMPDIR": str(base), "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(token),
                  "RAY_USAGE_STATS_ENABLED": "0", "PYTHONUNBUFFERED": "1"}


def processes_of(base: Path, names: tuple[str, ...] = ()) -> list[int]:
    """Pids of every process whose command line names ``base`` (all of a Ray instance's under it), or only those
    whose program is one of ``names``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                argv = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")
            except OSError:
                continue
            if str(base) in " ".join(argv) and (not names or Path(argv[0]).name in names):
                found.append(int(entry.name))
    return found


def programs_of(base: Path) -> set[str]:
    """The programs ``processes_of(base)`` run (a Python process's script too)."""
    programs = set()
    for pid in processes_of(base):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue
        programs |= {Path(a).name for a in argv[:2]}
    return programs


def kill(pids: list[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def ray_start_head(base: Path, env: dict[str, str]) -> str:
    """``ray start --head`` with its temp dir at ``$RAY_TMPDIR/ray`` (where it records itself as the current
    cluster) and its own ports; returns the GCS address it recorded."""

    def start() -> tuple[int, str]:
        ports = [f"--port={free_port()}", f"--ray-client-server-port={free_port()}",
                 f"--dashboard-agent-listen-port={free_port()}", f"--dashboard-agent-grpc-port={free_port()}",
                 f"--runtime-env-agent-port={free_port()}", f"--metrics-export-port={free_port()}",
                 "--min-worker-port=0", "--max-worker-port=0"]
        done = subprocess.run([sys.executable, "-m", "ray.scripts.scripts", "start", "--head",
                               f"--temp-dir={base / 'ray'}", "--num-cpus=1", "--include-dashboard=false",
                               "--disable-usage-stats", *ports],
                              env=env, capture_output=True, text=True, timeout=180, start_new_session=True)
        return done.returncode, done.stdout + done.stderr

    def clear() -> None:
        kill(processes_of(base / "ray"))
        shutil.rmtree(base / "ray", ignore_errors=True)

    code, out = ray_start_retried(start, clear)
    assert code == 0, out
    return (base / "ray" / "ray_current_cluster").read_text().strip()


def sweep(args: list[str], env: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bargain_ray", *args], env=env, cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout)


@pytest.fixture
def base():
    """A short temporary dir for Ray (its socket paths must stay under 108 bytes); every process under it is
    killed at the end."""
    path = Path(tempfile.mkdtemp(prefix="brc-", dir="/tmp"))
    yield path
    kill(processes_of(path))


def test_a_running_local_cluster_is_joined_and_said_and_a_dead_one_is_one_line_naming_how_to_clear_it(base, tmp_path):
    env = own_ray_env(base)
    address = ray_start_head(base, env)
    file = base / "ray" / "ray_current_cluster"

    small = [*DEMO, "grid.blocks=1"]  # 20 units: which Ray a run uses is said whatever it plays
    joined = sweep([*small, f"run.dir={tmp_path / 'live'}"], env)
    assert joined.returncode == 0, joined.stderr[-3000:]
    assert joined.stdout.splitlines()[0] == (f"grid demo: 20 units, 0 finished, 20 to run; ray: joining the running "
                                             f"local cluster at {address} (named in {file})")

    kill(processes_of(base))  # the cluster dies without `ray stop`: its address stays in the file
    assert file.exists()
    dead = sweep([*small, f"run.dir={tmp_path / 'dead'}", "run.ray_timeout_s=1"], env, timeout=120)  # Ray alone
    assert dead.returncode == ExitCode.CLUSTER_UNAVAILABLE, dead.stderr[-3000:]  # retries it for minutes
    assert dead.stderr.strip() == (
        f"error: the local Ray cluster at {address} (named in {file}) does not answer within 1 s (run.ray_timeout_s); "
        f"it stopped without `ray stop`: delete {file} (or run `ray stop`) and run the same command again to start a "
        "local instance")
    assert "units" not in dead.stdout, "refused before the plan line, nothing started"

    file.unlink()  # as the line says
    started = sweep([*small, f"run.dir={tmp_path / 'dead'}"], env)
    assert started.returncode == 0, started.stderr[-3000:]
    assert started.stdout.splitlines()[0].endswith("; ray: starting a local instance")


def test_a_ray_address_that_does_not_answer_is_one_line_and_exit_69(tmp_path, base):
    with socket.socket() as silent:  # takes connections (the kernel does) and never speaks: a stopped GCS
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        address = f"127.0.0.1:{silent.getsockname()[1]}"
        env = own_ray_env(base) | {"RAY_ADDRESS": address}
        done = sweep([*DEMO, f"run.dir={tmp_path}", "run.ray_timeout_s=1"], env, timeout=120)
    assert done.returncode == ExitCode.CLUSTER_UNAVAILABLE, done.stderr[-3000:]
    assert done.stderr.strip() == (f"error: the Ray cluster at RAY_ADDRESS={address} does not answer within 1 s "
                                   "(run.ray_timeout_s); start it or correct the address, or unset RAY_ADDRESS to "
                                   "start a local instance")


def journal(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_bytes().splitlines()] if path.exists() else []


def test_losing_the_local_cluster_mid_sweep_stops_in_seconds_with_69_and_the_next_run_resumes_to_the_same_tables(
        base, tmp_path, finished_sweep):
    grid = DEMO_WHOLE  # 200 units, whose uninterrupted sweep the session plays once for every test that needs it
    whole = finished_sweep(grid, tmp_path / "whole")
    folder, env = tmp_path / "sweep", own_ray_env(base)
    proc = subprocess.Popen([sys.executable, "-m", "bargain_ray", *grid, f"run.dir={folder}", "run.games_per_task=1",
                             "run.max_in_flight=4", "run.ray_timeout_s=2"], env=env, cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    while proc.poll() is None and not complete_lines(folder / "journal.jsonl"):
        time.sleep(0.01)
    cluster = processes_of(base, ("gcs_server", "raylet"))
    assert proc.poll() is None and len(cluster) == 2, "the sweep's own gcs_server and raylet, mid-sweep"
    kill(cluster)
    out, err = proc.communicate(timeout=120)  # Ray alone waits 60 s for its GCS, then exits 1
    assert proc.returncode == ExitCode.CLUSTER_UNAVAILABLE, err[-3000:]
    assert err.strip().splitlines()[-1] == (
        "error: the local Ray instance this run started was lost (its GCS or this node's raylet did not answer for "
        "2 s); the run stopped and every result already journaled is kept: run the same command again to resume "
        "(it starts a new local instance)"), err[-3000:]
    assert len(err.strip().splitlines()) == 1, f"one line of ours, nothing of Ray's: {err[-3000:]}"
    games = (folder / "journal.jsonl").read_bytes()
    finished = {r["unit"]["unit_id"] for r in journal(folder / "journal.jsonl")}  # every line parses
    assert 0 < len(finished) < 200

    again = sweep([*grid, f"run.dir={folder}"], env)
    assert again.returncode == 0, again.stderr[-3000:]
    assert again.stdout.splitlines()[0] == (f"grid demo: 200 units, {len(finished)} finished, {200 - len(finished)} "
                                            "to run; ray: starting a local instance")
    assert (folder / "journal.jsonl").read_bytes().startswith(games), "every journaled game kept"
    played = Counter(r["unit"]["unit_id"] for r in journal(folder / "journal.jsonl"))
    assert len(played) == 200 and set(played.values()) == {1}, "every unit once"
    a, b = (read_undated(f, "games") for f in (folder, whole))
    assert a.select("unit_id", "status", "outcome").equals(b.select("unit_id", "status", "outcome"))
    a, b = (read_undated(f, "turns").drop("call_ids") for f in (folder, whole))
    assert a.equals(b), "the tables equal an uninterrupted run's"


@pytest.mark.parametrize(("signum", "moment"), [(signal.SIGINT, "plan"), (signal.SIGINT, "ray.init"),
                                                (signal.SIGTERM, "ray.init")])
def test_a_signal_during_start_up_ends_the_command_at_once_with_one_line(base, tmp_path, signum, moment):
    """While the plan is read (a 100,000-unit design, after the folder is locked) or while ``ray.init`` starts a
    local instance (after the plan line): exit 130/143 with one line, no traceback, no Ray process left behind."""
    blocks = "grid.blocks=5000" if moment == "plan" else "grid.blocks=1"
    proc = subprocess.Popen([sys.executable, "-m", "bargain_ray", *DEMO, blocks, f"run.dir={tmp_path}"],
                            env=own_ray_env(base), cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if moment == "plan":
        while proc.poll() is None and not (tmp_path / "driver.lock").exists():
            time.sleep(0.01)
        planned = ""
    else:
        planned = proc.stdout.readline()
        assert planned.endswith("; ray: starting a local instance\n"), planned
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signum, err[-3000:]
    assert planned + out == planned, "nothing after the plan line (and no plan line when stopped while planning)"
    assert err == (f"{signal.Signals(signum).name} during start-up: stopped before any game was played; run the "
                   "same command to start again\n")
    deadline = time.monotonic() + 60
    while processes_of(base) and time.monotonic() < deadline:  # a half-started instance goes with its reaper
        time.sleep(0.2)
    assert not processes_of(base), "no Ray process of the stopped command is left"


def test_a_local_instance_starts_only_the_processes_a_run_uses_and_its_agent_on_a_free_port(base):
    """The instance a run starts has no autoscaler monitor, log monitor or API server (each on ``ray.init``'s path),
    and its dashboard agent serves on a port of its own: Ray's fixed default (52365) is held by any other Ray on the
    machine, and its agent then retries it for ~3.3 s while ``ray.init`` waits."""
    code = ("import sys, ray; from bargain_ray.execution.cluster import RayChoice, start_ray; "
            "start_ray(RayChoice(how='new')); "
            "print(ray._private.worker.global_worker.node.dashboard_agent_listen_port, flush=True); sys.stdin.read()")
    proc = subprocess.Popen([sys.executable, "-c", code], env=own_ray_env(base), cwd=ROOT, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        port = proc.stdout.readline().strip()
        programs = programs_of(base)
    finally:
        _, err = proc.communicate("", timeout=120)
    assert port.isdigit() and int(port) not in (0, 52365), (port, err[-3000:])
    assert {"gcs_server", "raylet"} <= programs, programs
    assert not {"monitor.py", "log_monitor.py", "dashboard.py"} & programs, programs


CHANGED_NODE_TABLE = ("import ray._private.state\n"
                      "def node_table(self, *args):\n"
                      "    raise TypeError('node_table() takes 2 positional arguments but 1 was given')\n"
                      "ray._private.state.GlobalState.node_table = node_table\n")
"""A method the lean start calls once the GCS and raylet run, as a newer Ray may take it, changed in the sweep's
process only (Ray's own start never asks the node table). A name gone before anything starts:
``tests/clients/test_ray_private.py``."""


@pytest.mark.timeout(900)  # a safety net: up to three standard starts, each about a minute on a loaded 2-core machine
def test_a_lean_start_broken_by_rays_internals_falls_back_to_the_standard_one_and_the_sweep_finishes(base, tmp_path):
    """One line says so; Ray starts the standard way (with its API server); every game is played; what the failed
    start had started is gone (one GCS runs). The standard start is tried again if Ray's own 30 s wait for its raylet
    runs out on a loaded machine (``ray_start_retried``), as the tests that ``ray start`` do."""
    import ray

    script = (f"import sys\nimport ray\n{CHANGED_NODE_TABLE}from bargain_ray.__main__ import main\n"
              "print('exit', main(sys.argv[1:]), flush=True)\nsys.stdin.read()")
    seen: dict[str, object] = {}

    def start() -> tuple[int, str]:
        proc = subprocess.Popen([sys.executable, "-c", script, *DEMO, f"run.dir={tmp_path / 'sweep'}"],
                                env=own_ray_env(base), cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        try:
            last = ""
            while not last.startswith("exit") and proc.poll() is None:
                last = proc.stdout.readline()
            seen.update(gcs=processes_of(base, ("gcs_server",)), programs=programs_of(base))
        finally:
            _, err = proc.communicate("", timeout=120)
        return (0 if last == "exit 0\n" else 1), err

    def clear() -> None:
        kill(processes_of(base))
        shutil.rmtree(tmp_path / "sweep", ignore_errors=True)

    exited, err = ray_start_retried(start, clear)
    assert exited == 0, err[-3000:]
    assert err == (f"ray: the lean start of a local instance failed on Ray {ray.__version__}'s internals (checked "
                   "against 2.60.0): TypeError: node_table() takes 2 positional arguments but 1 was given; starting "
                   "it the standard way, a few seconds slower\n")
    games = read_undated(tmp_path / "sweep", "games")
    assert games.height == 60 and games["known"].all()
    assert len(seen["gcs"]) == 1, "the failed start's GCS ended with its thread"
    assert "dashboard.py" in seen["programs"], seen["programs"]


def test_a_local_instance_that_cannot_start_for_its_own_reason_is_said_as_such_and_not_started_twice(tmp_path):
    """A socket path longer than Ray allows (Ray's temp dir is too deep) fails the lean start as it would fail the
    standard one: exit 69 with Ray's reason, nothing blamed on Ray's internals, one start tried."""
    deep = Path(tempfile.mkdtemp(prefix="x" * 100, dir="/tmp"))
    try:
        done = sweep([*DEMO, f"run.dir={tmp_path}"], own_ray_env(deep))
        sessions = list((deep / "ray").glob("session_2*"))
    finally:
        kill(processes_of(deep))
        shutil.rmtree(deep, ignore_errors=True)
    assert done.returncode == ExitCode.CLUSTER_UNAVAILABLE, done.stderr[-3000:]
    assert done.stderr.startswith("error: a local Ray instance could not be started: validate_socket_filename failed: "
                                  "AF_UNIX path length cannot exceed 107 bytes") and done.stderr.count("\n") == 1
    assert len(sessions) == 1
