"""``python -m bargain_ray.plan outputs/PILOT --metric NAME --contrast A-B --target-halfwidth X``: size a sweep from a pilot.

Prints the replicate blocks a paired contrast needs for a target half-width (or to find an effect with a given
power), the math and assumptions it rests on, and the dry-run estimate of that design: the pilot's config
(from its manifest) grown to the planned blocks. Nothing is run or spent.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pydantic import ValidationError

from bargain_ray.analysis.bootstrap import LEVEL, RESAMPLES
from bargain_ray.analysis.build import DEFAULT_BY
from bargain_ray.analysis.commands import Parser, count, share
from bargain_ray.analysis.power import Pilot, read_pilot, z_of
from bargain_ray.analysis.sweep import read_sweep
from bargain_ray.config import ProviderConfig, SweepConfig, compose_command
from bargain_ray.config.errors import ConfigError
from bargain_ray.core.status import ExitCode
from bargain_ray.design import resolve, units
from bargain_ray.design.estimate import estimate_cost
from bargain_ray.play.probe import typical_calls
from bargain_ray.store import MANIFEST
from bargain_ray.store.manifest import Manifest

CONTRAST = f"""contrast: A-B names two sides, each a set of the pilot's cells (a cell is one of each design factor:
  {', '.join(DEFAULT_BY)}). A side is a cell by its name (default|NL|a1, or a
  name from the grid's cells), or every cell with one value of one factor (an assignment as a1): e.g.
  default-explicit_objective, BL-LB, a1-a2; write factor=value where two factors share the value
  (condition=x-condition=y). A and B are two cells or two values of one factor. Every cell of a block plays
  the block's seed, so the contrast is paired on the seeds both sides played: d = A - B at each seed, a side's
  figure being the mean of its cells' seed means (as the report's estimates are means of seed means); games
  with an unknown result are left out.

math: the pilot's seed-clustered percentile bootstrap gives the interval [lo, hi] of mean(d) over its n seeds;
  sd = sqrt(n) (hi - lo) / (2 z) is the SD of d between seeds (z = 1.96 at level 0.95). With m blocks the
  half-width is z sd / sqrt(m), so a target half-width h needs m = ceil((z sd / h)^2), and an effect D found
  with power P at the same two-sided level needs m = ceil(((z + z_P) sd / D)^2); at least 2 blocks.

cost: the dry-run estimate (as run.dry_run=true prints it) of the pilot's config from its manifest.json, with
  grid.blocks=m; prices from conf/ as the grid composes today (a manifest records no prices).

exit codes: 0 planned (nothing is run or spent), 1 a usage error, not a sweep folder, or a pilot or contrast
  that cannot be planned from (one line says why)."""


def _positive(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text} is not > 0")
    return value


def parser() -> Parser:
    p = Parser(prog="python -m bargain_ray.plan", description=__doc__.split("\n\n")[1], epilog=CONTRAST,
               formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("pilot", type=Path, help="the pilot's sweep folder (a finished sweep of at least 2 blocks)")
    p.add_argument("--metric", required=True, help="a per-game metric column of the pilot (an unknown one lists them)")
    p.add_argument("--contrast", required=True, help="A-B: two cells, or two values of one design factor (below)")
    goal = p.add_mutually_exclusive_group(required=True)
    goal.add_argument("--target-halfwidth", type=_positive, metavar="X", help="the half-width wanted for A - B")
    goal.add_argument("--effect", type=_positive, metavar="D", help="the difference A - B to find (with --power)")
    p.add_argument("--power", type=share, default=0.8, help="the chance of finding --effect (default 0.8)")
    p.add_argument("--level", type=share, default=LEVEL, help=f"the intervals' confidence level (default {LEVEL})")
    p.add_argument("--resamples", type=count, default=RESAMPLES, help=f"bootstrap resamples (default {RESAMPLES})")
    p.add_argument("--seed", type=int, default=0, help="seed of the bootstrap generator")
    return p


def needs(pilot: Pilot, args: argparse.Namespace) -> tuple[int, str]:
    """The blocks the goal needs, and its line: the formula with the pilot's figures in it."""
    z, sd = pilot.z, pilot.sd
    if args.target_halfwidth:
        m = pilot.blocks_for_halfwidth(args.target_halfwidth)
        how = (f"for a {pilot.level:.0%} half-width of {args.target_halfwidth:g}: "
               f"ceil(({z:.3f} x {sd:.4g} / {args.target_halfwidth:g})^2)")
    else:
        m = pilot.blocks_for_effect(args.effect, args.power)
        zp = z_of(2 * args.power - 1)
        how = (f"to find a difference of {args.effect:g} with power {args.power:g} at the two-sided "
               f"{1 - pilot.level:.2g} level: ceil((({z:.3f} + {zp:.3f}) x {sd:.4g} / {args.effect:g})^2)")
    return m, f"blocks needed: {m} {how}; expected half-width {pilot.halfwidth(m):.4g}"


def _signed(x: float) -> str:
    return f"{x:.4g}" if x >= 0 else f"({x:.4g})"


def describe(pilot: Pilot, path: Path) -> list[str]:
    n = pilot.seeds
    dropped = f"; {pilot.dropped} seed(s) only one side has a figure for are left out" if pilot.dropped else ""
    return [
        f"pilot {path}: {pilot.blocks} blocks; metric {pilot.metric}; known games only, as in the report",
        f"  A = {pilot.a.text}",
        f"  B = {pilot.b.text}",
        f"  paired on the {n} seeds both sides played (every cell of a block plays its seed){dropped}",
        f"  mean A - B {pilot.mean:.4g}, {pilot.level:.0%} CI [{pilot.low:.4g}, {pilot.high:.4g}] "
        f"(seed-clustered percentile bootstrap, {pilot.resamples} resamples)",
        f"  SD of A - B between seeds: sqrt({n}) x ({pilot.high:.4g} - {_signed(pilot.low)}) / (2 x {pilot.z:.3f}) "
        f"= {pilot.sd:.4g}",
    ]


def grown(manifest: Manifest, blocks: int) -> SweepConfig:
    """The pilot's config as its manifest records it, with ``blocks`` blocks (listed seeds dropped: they only
    choose the seed numbers, which no estimate depends on)."""
    c = manifest.config
    return SweepConfig(grid=c.grid.model_copy(update={"blocks": blocks, "seeds": None}),
                       provider=ProviderConfig(name=c.provider), games=c.games, conditions=c.conditions,
                       models=c.models)


def priced(sweep: SweepConfig) -> tuple[SweepConfig, str]:
    """Prices are runtime keys, which a manifest does not record: each model's ``price`` and ``batch_api``
    from conf/ as the grid composes today, where its letter still names the same model."""
    try:
        today = SweepConfig.model_validate(compose_command([f"+grid={sweep.grid.name}"])).models
    except (ConfigError, ValidationError):
        return sweep, f"prices: grid {sweep.grid.name} does not compose from conf/ today: no price is known ($0)"
    same = {k for k, m in sweep.models.items() if k in today and today[k].name == m.name}
    models = {k: m.model_copy(update={"price": today[k].price, "batch_api": today[k].batch_api}) if k in same else m
              for k, m in sweep.models.items()}
    rest = sorted(k for k, m in sweep.models.items() if m.is_llm and k not in same)
    note = f"; models {', '.join(rest)} are not in it ($0)" if rest else ""
    return (sweep.model_copy(update={"models": models}),
            f"prices: from conf/ as grid {sweep.grid.name} composes today (a manifest records none){note}")


def cost(manifest: Manifest, blocks: int) -> list[str]:
    """The dry-run estimate of the grown design, and the share of it the blocks beyond the pilot's are (every
    block lays out the same units, so each costs the estimator alike)."""
    pilot_blocks = manifest.config.grid.blocks
    config, prices = priced(grown(manifest, blocks))
    sweep = resolve(config)
    plan = estimate_cost(sweep, list(units(sweep, manifest.created)), typical_calls)
    provider = "" if sweep.provider.name == "default" else f" provider={sweep.provider.name}"
    seeds = " (and grid.seeds with as many seeds, or none)" if manifest.config.grid.seeds else ""
    more = max(blocks - pilot_blocks, 0)
    beyond = (f"  of which blocks {pilot_blocks + 1}-{blocks}, beyond the pilot's {pilot_blocks}: "
              f"{plan.units * more // blocks} units, ~${plan.total_usd * more / blocks:.2f}") if more else \
        f"  the pilot's {pilot_blocks} blocks already reach it"
    return [f"design: the pilot's config with grid.blocks={blocks}: python -m bargain_ray +grid={sweep.grid.name}"
            f"{provider} grid.blocks={blocks}{seeds}", *plan.text().splitlines(), beyond, f"  {prices}"]


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if not (args.pilot / MANIFEST).is_file():
        print(f"error: {args.pilot} is not a sweep folder: no {MANIFEST}", file=sys.stderr)
        return ExitCode.USER_ERROR
    try:
        sweep = read_sweep(args.pilot)
        pilot = read_pilot(sweep, args.metric, args.contrast, args.level, args.resamples, args.seed)
    except (OSError, ValueError) as exc:  # PlanError, an unreadable manifest or table
        print(f"error: {exc}", file=sys.stderr)
        return ExitCode.USER_ERROR
    blocks, line = needs(pilot, args)
    se = 1 / (2 * (pilot.seeds - 1)) ** 0.5
    print("\n".join([
        *describe(pilot, args.pilot), line,
        f"assumptions: the pilot's SD holds for the planned design (it is an estimate from {pilot.seeds} seeds, "
        f"about ±{se:.0%} at one standard error for normal d); intervals are read as normal ones",
        *cost(sweep.manifest, blocks)]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
