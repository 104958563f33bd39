"""How close a sweep runs to a provider's request limit, and how often it is refused, the limit shared by workers.

A simulated provider enforces ``--rpm`` requests per minute per model (real 429s, rate-limit
headers) with a lognormal latency, ``--faults`` server errors (500/503) and ``--overloaded``
529s; a C3 sweep of ``--games`` games of one model (pairing OO, so one limit) runs on
``--workers`` GameRunner processes that share the cluster-wide limiter, through the Anthropic
or the OpenAI API (``--api``). The server's bucket holds ``--capacity-s`` seconds of the limit
and starts full; its replies report ``remaining`` and the time until it is full again.

By default the client is told the limit and 429s carry ``retry-after``. ``--announced-only``
is the harder stand-in: the client's limits are null, so they must be learned from the
headers, and 429s carry no ``retry-after`` (only the rate-limit headers and their resets).
``--like-provider`` is the server as Anthropic and OpenAI document theirs: a bucket of the
whole minute's limit (``--capacity-s 60`` unless given), headers read as each request is
admitted, 429s with ``retry-after``, half the faults 529s, 0.05 to 0.25 s replies; the client
is told nothing (it learns the limit, the bucket and its level from the headers).

    python bench/ratelimit.py --api anthropic --announced-only --rpm 300 --games 64 --faults 0.03
    python bench/ratelimit.py --api openai --announced-only --rpm 300 --games 64 --faults 0.03
    python bench/ratelimit.py --api anthropic --like-provider --rpm 300 --games 64 --faults 0.03

Figures, from the sim's log: ``utilization`` is what the server counted (every request but
429s, 5xx faults included: they use the limit too) over what its bucket allowed from the first
counted request to the last (the full bucket it started with plus the refill over that span);
``ok_utilization`` the successes over what the faults leave of that (the allowed times 1 minus
the fault rates); ``rate_limited_per_success`` is 429s per 200; ``inside_wait`` the requests
that arrived while a wait a 429 had announced (its retry-after, else its resets) still ran. The line
before says ``min_left``, the least an admitted request left in the server's request bucket: well above 0,
the limit never bound (the sweep asked for less than the bucket held) and ``utilization`` means little.

Last line (contract): ``utilization=<x> rate_limited_per_success=<x> inside_wait=<n> failed_games=<n>
p50_latency_s=<x> ok_utilization=<x>``.
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


def parse() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--api", choices=sorted(MODEL), default="anthropic")
    ap.add_argument("--rpm", type=float, default=300.0, help="the server's request limit per minute")
    ap.add_argument("--latency", type=float, help="median reply latency, seconds (default 0.5; like-provider 0.11)")
    ap.add_argument("--sigma", type=float, help="lognormal spread of the latency (default 0.3; like-provider 0.4)")
    ap.add_argument("--faults", type=float, default=0.03,
                    help="probability of a server fault per request (500/503; like-provider: half of it 529s)")
    ap.add_argument("--overloaded", type=float, help="probability of a 529 per request (default 0)")
    ap.add_argument("--capacity-s", type=float, help="seconds of the limit the server's bucket holds (default 1)")
    ap.add_argument("--report-at", choices=("response", "arrival"), help="when the headers read the buckets")
    ap.add_argument("--games", type=int, default=64, help="games to play (rounded up to whole blocks of 4)")
    ap.add_argument("--workers", type=int, default=2, help="GameRunner processes sharing the limit")
    ap.add_argument("--announced-only", action="store_true",
                    help="the client is not told the limit and 429s carry no retry-after")
    ap.add_argument("--like-provider", action="store_true",
                    help="the server as the providers document theirs; the client is told nothing")
    args = ap.parse_args()
    like = args.like_provider
    defaults = {"latency": 0.11 if like else 0.5, "sigma": 0.4 if like else 0.3, "capacity_s": 60.0 if like else 1.0,
                "report_at": "arrival" if like else "response", "overloaded": args.faults / 2 if like else 0.0}
    for name, value in defaults.items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    if like and args.overloaded:
        args.faults = max(args.faults - args.overloaded, 0.0)
    return args


def main() -> None:
    args = parse()
    limits = {"requests_per_minute": args.rpm, "retry_after": not args.announced_only, "burst_s": args.capacity_s,
              "report_at": args.report_at}
    latency = {"median_s": args.latency, "sigma": args.sigma, "max_s": 0.25 if args.like_provider else 30.0}
    settings = SimSettings(limits=limits, latency=latency,
                           faults={"error_5xx": args.faults, "overloaded": args.overloaded})
    server = SimServer(settings)
    blocks = -(-args.games // ASSIGNMENTS_PER_BLOCK)
    with tempfile.TemporaryDirectory() as tmp, server:
        told = [] if args.announced_only or args.like_provider else [
            f"provider.settings.limits.requests_per_minute={args.rpm}"]
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
    counted = sorted(e.arrived for e in log if e.status != 429)
    ok = sum(1 for e in log if e.status == 200)
    rejected = sum(1 for e in log if e.status == 429)
    span = counted[-1] - counted[0]
    full = max(args.rpm / 60 * args.capacity_s, 1.0)
    allowed = full + args.rpm / 60 * span
    left = 1.0 - args.faults - args.overloaded
    failed = games.height - games["known"].sum()
    p50 = float(calls.filter(pl.col("status") == "ok")["latency_s"].median())
    print(f"api={args.api} announced_only={args.announced_only} like_provider={args.like_provider} "
          f"games={games.height} workers={args.workers} limit_rpm={args.rpm:g} capacity={full:g} "
          f"report_at={args.report_at} faults_5xx={args.faults:g} overloaded={args.overloaded:g} "
          f"requests={len(log)} ok={ok} rejected_429={rejected} span_s={span:.1f} allowed={allowed:.0f} "
          f"counted_rpm={(len(counted) - 1) / span * 60:.1f} ok_rpm={ok / span * 60:.1f} "
          f"min_left={min((e.left for e in log if e.left is not None), default=None)}")
    print(f"utilization={len(counted) / allowed:.3f} rate_limited_per_success={rejected / max(ok, 1):.4f} "
          f"inside_wait={requests_inside_waits(log)} failed_games={failed} p50_latency_s={p50:.3f} "
          f"ok_utilization={ok / (allowed * left):.3f}")


if __name__ == "__main__":
    main()
