"""How close a sweep runs to a provider's request limit, the limit shared by several worker processes.

A simulated provider enforces ``--rpm`` requests per minute (real 429s) with a
lognormal latency; a C3 sweep of ``--games`` games of one model (pairing OO,
so one limit) runs on ``--workers`` GameRunner processes that share the
cluster-wide limiter. Utilization is the rate the server accepted, from its
first to its last accepted request, over the limit.

    python bench/ratelimit.py --rpm 600 --latency 0.5 --games 60 --workers 2

Last line (contract): ``utilization=<achieved rpm / limit> failed_games=<n> p50_latency_s=<x>``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import tempfile
from pathlib import Path

import polars as pl

from bargain_ray.config import SweepConfig, compose_dict
from bargain_ray.execution.sweep import run_sweep
from bargain_ray.providers.sim import SimServer, SimSettings

ASSIGNMENTS_PER_BLOCK = 4


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rpm", type=float, default=600.0, help="the server's request limit per minute")
    ap.add_argument("--latency", type=float, default=0.5, help="median reply latency, seconds")
    ap.add_argument("--sigma", type=float, default=0.3, help="lognormal spread of the latency")
    ap.add_argument("--games", type=int, default=60, help="games to play (rounded up to whole blocks of 4)")
    ap.add_argument("--workers", type=int, default=2, help="GameRunner processes sharing the limit")
    args = ap.parse_args()

    settings = SimSettings(limits={"requests_per_minute": args.rpm}, latency={"median_s": args.latency, "sigma": args.sigma})
    server = SimServer(settings)
    blocks = -(-args.games // ASSIGNMENTS_PER_BLOCK)
    with tempfile.TemporaryDirectory() as tmp, server:
        overrides = [
            "+grid=c3_smoke", f"grid.blocks={blocks}", "grid.designs.0.pairings=[OO]", "provider=sim",
            f"provider.settings.base_url={server.base_url}",
            f"provider.settings.limits.requests_per_minute={args.rpm}",
            f"run.workers={args.workers}", f"run.dir={tmp}", "run.progress=false",
        ]
        sweep = SweepConfig.model_validate(compose_dict("config", overrides))
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            run_sweep(sweep)
        print(out.getvalue().strip())
        games = pl.read_parquet(Path(tmp) / "games.parquet")
        calls = pl.read_parquet(Path(tmp) / "calls.parquet")
    accepted = sorted(e["arrived"] for e in server.log if e["status"] == 200)
    rejected = sum(1 for e in server.log if e["status"] == 429)
    span = accepted[-1] - accepted[0]
    achieved = (len(accepted) - 1) / span * 60
    failed = games.height - games["known"].sum()
    p50 = float(calls.filter(pl.col("status") == "ok")["latency_s"].median())
    print(f"games={games.height} workers={args.workers} limit_rpm={args.rpm:g} accepted={len(accepted)} "
          f"rejected_429={rejected} span_s={span:.1f} achieved_rpm={achieved:.1f}")
    print(f"utilization={achieved / args.rpm:.3f} failed_games={failed} p50_latency_s={p50:.3f}")


if __name__ == "__main__":
    main()
