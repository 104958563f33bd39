"""Scale benchmark: a large sweep of strategy agents through Ray, against one plain loop.

    python bench/scale.py                                    # 100,000 games
    python bench/scale.py --games 20000 --loop-games 5000    # smaller

The Ray figure is the whole sweep as ``python -m bargain_ray`` runs it (plan,
games on GameRunner actors, the durable journal, the parquet tables), with Ray
already started. The report it builds after that (analysis, the dataset export and
the HTML page, as every sweep ends) is timed on its own in a fresh Python process, so
``report_peak_rss_mb`` is the report's own peak resident memory (``VmHWM`` of that
process image), not the driver's; ``--no-report`` skips it. The plain loop plays the same units one after another in
this process, with the same per-game code (``GameRunner.play``: game, agents,
the shared loop; the record dumped to JSON as the journal does) and no Ray, no journal, no tables.

The driver's peak memory is sampled from ``/proc/self/status`` in a thread while
the sweep runs (Ray's own processes are not the driver): ``driver_peak_rss_mb`` is
the resident set as ``ps`` shows it, which includes the pages of Ray's shared
object store the driver has read results from; the line before splits it into
the driver's own heap (anonymous) and that shared memory. Last line (contract):
``games_per_s=<x> driver_peak_rss_mb=<y> units=<n> ray_vs_loop=<x> report_s=<s> report_peak_rss_mb=<m>``.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import math
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import polars as pl

from bargain_ray.config import compose_dict
from bargain_ray.design import ResolvedSweep, resolve, units
from bargain_ray.execution.cluster import ensure_ray
from bargain_ray.execution.sweep import run_sweep
from bargain_ray.execution.worker import GameRunner

GRID = "demo"


def sweep_config(games: int, folder: Path, workers: int) -> ResolvedSweep:
    """The demo grid with enough replicate blocks for ``games`` units (rounded up to whole blocks)."""
    per_block = sum(1 for _ in units(_compose(1, folder, workers), "00000000"))
    return _compose(math.ceil(games / per_block), folder, workers)


def _compose(blocks: int, folder: Path, workers: int) -> ResolvedSweep:
    overrides = [f"+grid={GRID}", f"grid.blocks={blocks}", f"run.dir={folder}", f"run.workers={workers}",
                 "run.progress=false", "run.report=false"]
    return resolve(compose_dict("config", overrides))


def rss_mb() -> dict[str, float]:
    """This process's resident memory (VmRSS) and its parts, in MiB: anonymous (the heap) and
    shared memory (pages of Ray's object store the driver has mapped while reading results)."""
    fields = {"VmRSS": "rss", "RssAnon": "anon", "RssShmem": "shmem"}
    out = {}
    with open("/proc/self/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in fields:
                out[fields[key]] = int(value.split()[0]) / 1024
    return out


@contextmanager
def peak_rss(every_s: float = 0.02) -> Iterator[dict[str, float]]:
    """Sample this process's memory in a thread; yields the peak of each figure, filled on exit."""
    peak = rss_mb()
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(every_s):
            for key, value in rss_mb().items():
                peak[key] = max(peak[key], value)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    try:
        yield peak
    finally:
        stop.set()
        thread.join()


REPORT = """
import sys, time
from bargain_ray.analysis.report import build_report
t0 = time.perf_counter()
build_report(sys.argv[1])
hwm = next(line for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(time.perf_counter() - t0, int(hwm.split()[1]) / 1024)
"""
"""The report in its own process: prints its wall time (imports excluded) and its peak RSS in MiB
(``VmHWM``: the peak of this process image, which ``getrusage`` would mix with the forking driver's)."""


def timed_report(folder: Path) -> tuple[float, float]:
    """(seconds, peak MiB) of building the report of ``folder`` in a fresh process."""
    done = subprocess.run([sys.executable, "-c", REPORT, str(folder)], capture_output=True, text=True, check=False)
    if done.returncode:
        raise SystemExit(f"report failed: {done.stderr[-2000:]}")
    seconds, peak = done.stdout.split()[-2:]
    return float(seconds), float(peak)


async def plain_loop(sweep: ResolvedSweep, created: str, limit: int | None) -> int:
    """The same units (the first ``limit`` of them), one game after another, in this process without Ray."""
    runner = GameRunner(sweep.model_dump(mode="json"))
    n = 0
    for unit in itertools.islice(units(sweep, created), limit):
        (await runner.play(unit)).model_dump(mode="json")
        n += 1
    await runner.close()
    return n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=100_000, help="games in the sweep (whole demo blocks)")
    parser.add_argument("--workers", type=int, default=2, help="GameRunner actors (run.workers)")
    parser.add_argument("--loop-games", type=int, default=None,
                        help="time the plain loop on the first N units only (its rate does not depend on N)")
    parser.add_argument("--no-report", action="store_true", help="do not build (and time) the report")
    parser.add_argument("--dir", type=Path, default=None, help="sweep folder (default: a fresh temp dir)")
    args = parser.parse_args()

    folder = args.dir or Path(tempfile.mkdtemp(prefix="bench_scale_"))
    sweep = sweep_config(args.games, folder, args.workers)
    t0 = time.perf_counter()
    ensure_ray()
    init_s = time.perf_counter() - t0
    before_mb = rss_mb()["rss"]

    with peak_rss() as mem:
        t0 = time.perf_counter()
        code = run_sweep(sweep)
        ray_s = time.perf_counter() - t0
    if code:
        raise SystemExit(f"sweep exited with {code}")
    report_s, report_mb = (0.0, 0.0) if args.no_report else timed_report(folder)
    games = pl.read_parquet(folder / "games.parquet", columns=["unit_id"])
    n = games.height
    assert games["unit_id"].n_unique() == n, "a unit appears twice in games.parquet"

    created = json.loads((folder / "manifest.json").read_text())["created"]
    t0 = time.perf_counter()
    looped = asyncio.run(plain_loop(sweep, created, args.loop_games))
    loop_s = time.perf_counter() - t0
    assert looped == min(n, args.loop_games or n), f"plain loop played {looped} games of {n}"

    ray_rate, loop_rate = n / ray_s, looped / loop_s
    print(f"sweep folder: {folder}")
    print(f"ray_init_s={init_s:.1f} ray_sweep_s={ray_s:.1f} workers={args.workers} loop_games={looped} "
          f"loop_s={loop_s:.1f} loop_games_per_s={loop_rate:.1f}")
    print(f"driver_rss_before_mb={before_mb:.0f} driver_peak_anon_mb={mem['anon']:.0f} "
          f"driver_peak_shmem_mb={mem['shmem']:.0f}")
    print(f"games_per_s={ray_rate:.1f} driver_peak_rss_mb={mem['rss']:.0f} units={n} "
          f"ray_vs_loop={ray_rate / loop_rate:.2f} report_s={report_s:.1f} report_peak_rss_mb={report_mb:.0f}")


if __name__ == "__main__":
    main()
