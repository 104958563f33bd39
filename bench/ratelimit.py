"""How close a sweep runs to a provider's request limit, and how often it is refused, the limit shared by workers.

A simulated provider enforces ``--rpm`` requests per minute per model (real 429s, rate-limit
headers) with a lognormal latency and ``--faults`` server errors (500/503); a C3 sweep of
``--games`` games of one model (pairing OO, so one limit) runs on ``--workers`` GameRunner
processes that share the cluster-wide limiter, through the Anthropic or the OpenAI API (``--api``).

By default the client is told the limit and 429s carry ``retry-after``. ``--announced-only``
is the harder stand-in: the client's limits are null, so they must be learned from the
headers, and 429s carry no ``retry-after`` (only the rate-limit headers and their resets).

    python bench/ratelimit.py --api anthropic --announced-only --rpm 300 --games 64 --faults 0.03
    python bench/ratelimit.py --api openai --announced-only --rpm 300 --games 64 --faults 0.03

Figures, from the sim's log: utilization is the rate the server counted (every request but
429s, 5xx faults included: they use the limit too), from its first to its last, over the
limit; ``rate_limited_per_success`` is 429s per 200; ``inside_wait`` the requests that arrived
while a wait a 429 had announced (its retry-after, else its resets) still ran.

Last line (contract): ``utilization=<x> rate_limited_per_success=<x> inside_wait=<n> failed_games=<n>
p50_latency_s=<x>``.
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
from bargain_ray.providers.sim import SimServer, SimSettings, requests_inside_waits

ASSIGNMENTS_PER_BLOCK = 4
MODEL = {"anthropic": "claude-opus-5-5", "openai": "gpt-5-mini"}
"""The model O plays through each API (its own config: limits null, 32 in flight)."""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--api", choices=sorted(MODEL), default="anthropic")
    ap.add_argument("--rpm", type=float, default=300.0, help="the server's request limit per minute")
    ap.add_argument("--latency", type=float, default=0.5, help="median reply latency, seconds")
    ap.add_argument("--sigma", type=float, default=0.3, help="lognormal spread of the latency")
    ap.add_argument("--faults", type=float, default=0.03, help="probability of a 500/503 per request")
    ap.add_argument("--games", type=int, default=64, help="games to play (rounded up to whole blocks of 4)")
    ap.add_argument("--workers", type=int, default=2, help="GameRunner processes sharing the limit")
    ap.add_argument("--announced-only", action="store_true",
                    help="the client is not told the limit and 429s carry no retry-after")
    args = ap.parse_args()

    limits = {"requests_per_minute": args.rpm, "retry_after": not args.announced_only}
    settings = SimSettings(limits=limits, latency={"median_s": args.latency, "sigma": args.sigma},
                           faults={"error_5xx": args.faults})
    server = SimServer(settings)
    blocks = -(-args.games // ASSIGNMENTS_PER_BLOCK)
    with tempfile.TemporaryDirectory() as tmp, server:
        told = [] if args.announced_only else [f"provider.settings.limits.requests_per_minute={args.rpm}"]
        overrides = [
            "+grid=c3_smoke", f"grid.blocks={blocks}", "grid.designs.0.pairings=[OO]", f"model@models.O={MODEL[args.api]}",
            "provider=sim", f"provider.settings.base_url={server.base_url}", *told,
            f"run.workers={args.workers}", f"run.dir={tmp}", "run.progress=false", "run.report=false",
        ]
        sweep = SweepConfig.model_validate(compose_dict("config", overrides))
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            run_sweep(sweep)
        print(out.getvalue().strip())
        games = pl.read_parquet(Path(tmp) / "games.parquet")
        calls = pl.read_parquet(Path(tmp) / "calls.parquet")
    log = server.log
    counted = sorted(e["arrived"] for e in log if e["status"] != 429)
    ok = sum(1 for e in log if e["status"] == 200)
    rejected = sum(1 for e in log if e["status"] == 429)
    span = counted[-1] - counted[0]
    achieved = (len(counted) - 1) / span * 60
    failed = games.height - games["known"].sum()
    p50 = float(calls.filter(pl.col("status") == "ok")["latency_s"].median())
    print(f"api={args.api} announced_only={args.announced_only} games={games.height} workers={args.workers} "
          f"limit_rpm={args.rpm:g} requests={len(log)} ok={ok} rejected_429={rejected} span_s={span:.1f} "
          f"counted_rpm={achieved:.1f} ok_rpm={ok / span * 60:.1f}")
    print(f"utilization={achieved / args.rpm:.3f} rate_limited_per_success={rejected / max(ok, 1):.4f} "
          f"inside_wait={requests_inside_waits(log)} failed_games={failed} p50_latency_s={p50:.3f}")


if __name__ == "__main__":
    main()
