"""The C3 design online and through the batch APIs, on the simulated provider: what batching costs and saves.

Both runs play the same units on a fresh in-process sim (``--latency`` per online reply, ``--delay``
per batch, ``--errored``/``--expired`` per batched request, retried online). Cost is the sum of
``calls.parquet``'s ``cost_usd``; wall is ``run_sweep``'s time with Ray already up. ``paid_twice``
counts, from the sim's log of the batch run, batched successes of a call id beyond its first plus
online successes beyond the calls recorded as answered online.

    python bench/batch.py                      # c3_smoke (16 games)
    python bench/batch.py --grid c3_full --blocks 3

Last line (contract): ``cost_ratio=<batch/online> wall_ratio=<batch/online> batches=<n> paid_twice=<n>``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import tempfile
import time
from collections import Counter
from pathlib import Path

import polars as pl

from bargain_ray.config import SweepConfig, compose_dict
from bargain_ray.execution.cluster import ensure_ray
from bargain_ray.execution.sweep import run_sweep
from bargain_ray.providers.sim import LogEntry, SimServer, SimSettings


def run(args: argparse.Namespace, batch: bool) -> tuple[float, float, pl.DataFrame, list[LogEntry]]:
    """(cost, wall seconds, calls table, sim log) of one run."""
    settings = SimSettings(
        latency={"median_s": args.latency, "sigma": 0.3},
        batch={"delay_s": args.delay, "errored": args.errored, "expired": args.expired},
        strategies={"claude-opus-5-5": "boulware", "claude-haiku-5-5": "conceder"},
    )
    server = SimServer(settings)
    with tempfile.TemporaryDirectory() as tmp, server:
        overrides = [
            f"+grid={args.grid}", "provider=sim", f"provider.settings.base_url={server.base_url}",
            f"run.dir={tmp}", "run.progress=false", "run.report=false",
            f"run.batch_api={str(batch).lower()}", f"run.batch.poll_s={args.poll}",
            f"run.batch.max_wait_s={args.max_wait}",
        ] + ([f"grid.blocks={args.blocks}"] if args.blocks else [])
        sweep = SweepConfig.model_validate(compose_dict("config", overrides))
        out = io.StringIO()
        start = time.monotonic()
        with contextlib.redirect_stdout(out):
            code = run_sweep(sweep)
        wall = time.monotonic() - start
        if code:
            raise SystemExit(f"the {'batch' if batch else 'online'} run failed:\n{out.getvalue()}")
        calls = pl.read_parquet(Path(tmp) / "calls.parquet")
        games = pl.read_parquet(Path(tmp) / "games.parquet")
    print(f"{'batch' if batch else 'online'}: games={games.height} known={games['known'].sum()} "
          f"calls={calls.height} cost_usd={calls['cost_usd'].sum():.4f} wall_s={wall:.1f}")
    return float(calls["cost_usd"].sum()), wall, calls, server.log


def paid_twice(calls: pl.DataFrame, log: list[LogEntry]) -> int:
    batched = Counter(e.custom_id for e in log if e.batch_id and e.status == 200)
    online = sum(1 for e in log if not e.batch_id and e.status == 200)
    recorded_online = calls.filter(~pl.col("request_id").str.contains("batch", literal=True)).height
    return sum(n - 1 for n in batched.values() if n > 1) + max(online - recorded_online, 0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--grid", default="c3_smoke")
    ap.add_argument("--blocks", type=int, default=None, help="replicate blocks (default: the grid's)")
    ap.add_argument("--latency", type=float, default=0.5, help="median online reply latency, seconds")
    ap.add_argument("--delay", type=float, default=2.0, help="seconds a batch takes at the sim")
    ap.add_argument("--errored", type=float, default=0.0, help="share of batched requests that error")
    ap.add_argument("--expired", type=float, default=0.0, help="share of batched requests that expire")
    ap.add_argument("--poll", type=float, default=0.25, help="run.batch.poll_s")
    ap.add_argument("--max-wait", type=float, default=0.5, help="run.batch.max_wait_s")
    args = ap.parse_args()
    ensure_ray()
    cost_online, wall_online, calls_online, log_online = run(args, batch=False)
    cost_batch, wall_batch, calls_batch, log_batch = run(args, batch=True)
    batches = len({e.batch_id for e in log_batch if e.batch_id})
    retried = sum(1 for e in log_batch if e.batch_id and e.status != 200)
    twice = paid_twice(calls_batch, log_batch) + paid_twice(calls_online, log_online)
    print(f"retried_online={retried} same_calls={calls_online.height == calls_batch.height}")
    print(f"cost_ratio={cost_batch / cost_online:.4f} wall_ratio={wall_batch / wall_online:.2f} "
          f"batches={batches} paid_twice={twice}")


if __name__ == "__main__":
    main()
