"""What one model call costs end to end: the C3 design on the simulated provider, zero latency, no limits.

    python bench/throughput.py                 # c3_full: 640 games, about 3,000 calls
    python bench/throughput.py --blocks 10     # a quarter of it
    python bench/throughput.py --profile DIR   # also py-spy profiles of the driver, the sim and each actor
    python bench/throughput.py -- run.journal_calls=false   # Hydra overrides of the sweep

The simulated provider runs in its own process (``python -m bargain_ray.providers.sim``), so its CPU is
apart from the sweep's. The sweep is ``run_sweep`` as ``python -m bargain_ray`` runs it (plan, games on
the GameRunner actors, the call and game journals, the parquet tables; report off), with Ray already
started (the start-up is timed elsewhere). CPU seconds are read from ``/proc`` around the sweep: the
driver (this process), the GameRunner actors (``worker``), the simulated provider (``sim``), and the rest
of Ray (``ray``: the limiter and journal actors, raylet, GCS), each per call the sim answered.

Last line (contract): ``calls_per_s=<x> driver_cpu_s_per_call=<y> worker_cpu_s_per_call=<z>
sim_cpu_s_per_call=<w> ray_cpu_s_per_call=<v> calls=<n> wall_s=<s> steady_calls_per_s=<x>``: ``calls_per_s``
is over the whole sweep (actor start-up and the tables included), ``steady_calls_per_s`` the sim's rate over
the middle 80% of its calls.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import ray

from bargain_ray.config import SweepConfig, compose_dict
from bargain_ray.execution.cluster import ensure_ray
from bargain_ray.execution.sweep import run_sweep

TICK = os.sysconf("SC_CLK_TCK")


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of one process (its threads included), 0 if it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICK


def children(pid: int) -> set[int]:
    """The processes ``pid`` started (each of its threads' ``children`` list: no scan of ``/proc``)."""
    out: set[int] = set()
    with contextlib.suppress(OSError):
        for task in Path(f"/proc/{pid}/task").iterdir():
            with contextlib.suppress(OSError):
                out.update(int(c) for c in (task / "children").read_text().split())
    return out


def title(pid: int) -> str:
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode(errors="replace")
    return ""


class Sampler:
    """CPU seconds of this Ray session's processes, read every ``every_s`` while the sweep runs (the
    GameRunner actors end with it): the GameRunners (``worker``) and the rest (``ray``: raylet, GCS, and
    the other actors, the limiter and the call journal among them). With ``profile`` set, py-spy records
    each GameRunner as it appears."""

    def __init__(self, profile: Path | None, every_s: float = 0.5) -> None:
        node = ray._private.worker._global_node
        self.own = {p.process.pid for procs in node.all_processes.values() for p in procs}
        self.raylet = node.all_processes["raylet"][0].process.pid
        self.profile = profile
        self.every_s = every_s
        self.start: dict[int, float] = {}
        self.last: dict[int, tuple[str, float]] = {}
        self.titles: dict[int, str] = {}
        self.started: dict[int, float] = {}  # a GameRunner's CPU when first seen past its __init__
        self.spies: list[subprocess.Popen[bytes]] = []
        self._stop = threading.Event()
        self._read(first=True)
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _read(self, first: bool = False) -> None:
        pids = self.own | children(self.raylet)
        for pid in pids:
            used, name = cpu_s(pid), title(pid)
            if first:
                self.start[pid] = used
            elif name.startswith("ray::") and name != "ray::IDLE" and self.profile and all(
                    s.args[-1] != str(pid) for s in self.spies):
                label = name.removeprefix("ray::").split(".")[0].split()[0]
                self.spies.append(spy(self.profile / f"{label}-{pid}.txt", pid))
            if used:
                kind = "worker" if name.startswith("ray::GameRunner") else self.last.get(pid, ("ray", 0))[0]
                self.last[pid] = (kind, used)
                self.titles[pid] = name.split("/")[-1][:40]
                if kind == "worker" and "__init__" not in name:
                    self.started.setdefault(pid, used)

    def _run(self) -> None:
        while not self._stop.wait(self.every_s):
            self._read()

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._read()
        for s in self.spies:
            s.send_signal(signal.SIGINT)
            s.wait(60)

    def by_process(self) -> str:
        """Each process's CPU seconds during the sweep, largest first (the line before the last)."""
        used = sorted(((u - self.start.get(pid, 0.0), self.titles.get(pid, "?")) for pid, (_, u) in self.last.items()),
                      reverse=True)
        return " ".join(f"{title.replace(' ', '_')}={u:.1f}" for u, title in used if u >= 0.05)

    def used(self) -> dict[str, float]:
        """CPU seconds by kind; ``worker_start`` is the GameRunners' up to the end of their ``__init__`` (to
        within a sample), the rest of theirs is ``worker``."""
        out = {"worker": 0.0, "ray": 0.0, "worker_start": 0.0}
        for pid, (kind, used) in self.last.items():
            begin = self.start.get(pid, 0.0)
            if kind == "worker":
                out["worker_start"] += self.started.get(pid, used) - begin
                begin = self.started.get(pid, used)
            out[kind] += used - begin
        return out


def spy(path: Path, pid: int) -> subprocess.Popen[bytes]:
    """py-spy records ``pid`` (collapsed stacks) until interrupted."""
    return subprocess.Popen(["py-spy", "record", "--nonblocking", "-r", "100", "-f", "raw", "-o", str(path),
                             "-p", str(pid)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_sim(port: int) -> subprocess.Popen[bytes]:
    settings = Path(tempfile.mkdtemp()) / "sim.yaml"
    settings.write_text(json.dumps({"latency": {"median_s": 0.0}}))
    sim = subprocess.Popen([sys.executable, "-m", "bargain_ray.providers.sim", "--port", str(port),
                            "--settings", str(settings)], stdout=subprocess.PIPE)
    assert sim.stdout is not None and b"serving" in sim.stdout.readline(), "the simulated provider did not start"
    return sim


def sim_calls(url: str) -> tuple[int, float, float, float]:
    """Calls the sim answered, their rate over the middle 80% of them (no start-up, no tail), and the wall-clock
    times of the first and the last."""
    with urllib.request.urlopen(f"{url}/sim/log", timeout=60) as resp:
        times = sorted(e["arrived"] for e in json.load(resp) if e["status"] == 200)
    low, high = times[len(times) // 10], times[len(times) * 9 // 10]
    return len(times), (len(times) * 8 // 10) / max(high - low, 1e-9), times[0], times[-1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--grid", default="c3_full")
    ap.add_argument("--blocks", type=int, help="replicate blocks (default: the grid's)")
    ap.add_argument("--workers", type=int, default=2, help="GameRunner actors")
    ap.add_argument("--profile", type=Path, help="write py-spy profiles (raw, collapsed stacks) here")
    ap.add_argument("overrides", nargs="*", help="more Hydra overrides of the sweep (e.g. run.journal_calls=false)")
    args = ap.parse_args()
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    sim = start_sim(port)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            overrides = [f"+grid={args.grid}", "provider=sim", f"provider.settings.base_url={url}",
                         f"run.workers={args.workers}", f"run.dir={tmp}", "run.progress=false", "run.report=false",
                         *([f"grid.blocks={args.blocks}"] if args.blocks else []), *args.overrides]
            sweep = SweepConfig.model_validate(compose_dict("config", overrides))
            ensure_ray(set())
            if args.profile:
                args.profile.mkdir(parents=True, exist_ok=True)
            spies = [spy(args.profile / f"{name}.txt", pid) for name, pid in
                     (("driver", os.getpid()), ("sim", sim.pid))] if args.profile else []
            before = {"driver": cpu_s(os.getpid()), "sim": cpu_s(sim.pid)}
            start, started_at = time.monotonic(), time.time()
            out = io.StringIO()
            with contextlib.redirect_stdout(out), Sampler(args.profile) as sampler:
                code = run_sweep(sweep)
            wall = time.monotonic() - start
            used = {"driver": cpu_s(os.getpid()) - before["driver"], "sim": cpu_s(sim.pid) - before["sim"],
                    **sampler.used()}
            processes = sampler.by_process()
            for s in spies:
                s.send_signal(signal.SIGINT)
                s.wait(60)
        calls, steady, first, last = sim_calls(url)
    finally:
        sim.terminate()
        sim.wait(30)
    print(out.getvalue().strip().splitlines()[-1])
    load = os.getloadavg()[0]
    print(f"ray processes (cpu s): {processes}")
    print(f"timeline (s from the sweep's start): first_call={first - started_at:.1f} last_call={last - started_at:.1f} "
          f"end={wall:.1f}")
    print(f"grid={args.grid} workers={args.workers} exit={code} load_1min={load:.1f} "
          + " ".join(f"{k}_cpu_s={v:.1f}" for k, v in used.items()))
    print(f"calls_per_s={calls / wall:.1f} " + " ".join(
        f"{k}_cpu_s_per_call={used[k] / calls:.5f}" for k in ("driver", "worker", "sim", "ray"))
        + f" calls={calls} wall_s={wall:.1f} steady_calls_per_s={steady:.1f}")


if __name__ == "__main__":
    main()
