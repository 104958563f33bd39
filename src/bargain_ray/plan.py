"""``python -m bargain_ray.plan outputs/PILOT --metric NAME --contrast A-B --target-halfwidth X``: size a sweep from a pilot.

Prints the replicate blocks a paired contrast needs to reach a target half-width with a stated assurance (or to find
an effect with a given power), accounting for what the pilot's seeds leave unknown of the SD; the math and
assumptions it rests on; and the command that grows the pilot's own folder to that design (run.dir included,
so the pilot's games are kept and never paid again), with that command's dry run: what it keeps, what it adds and
what the new part costs, estimated from the pilot's own measured tokens. Nothing is run or spent.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
from pathlib import Path

from bargain_ray.analysis.build import DEFAULT_BY
from bargain_ray.analysis.commands import Parser, share
from bargain_ray.analysis.intervals import LEVEL, MIN_SEEDS
from bargain_ray.analysis.power import Pilot, PlanError, read_pilot
from bargain_ray.analysis.sweep import read_sweep
from bargain_ray.config.errors import ConfigError
from bargain_ray.core.status import ExitCode
from bargain_ray.design import ResolvedSweep
from bargain_ray.design.resolved import compose_sweep
from bargain_ray.execution.plan import describe, dry_run, plan
from bargain_ray.store import MANIFEST, ChangedConfig
from bargain_ray.store.manifest import Manifest, changed_fields

CONTRAST = f"""contrast: A-B names two sides, each a set of the pilot's cells (a cell is one of each design factor:
  {', '.join(DEFAULT_BY)}). A side is a cell by its name (default|NL|a1, or a
  name from the grid's cells), or every cell with one value of one factor (an assignment as a1): e.g.
  default-explicit_objective, BL-LB, a1-a2; write factor=value where two factors share the value
  (condition=x-condition=y). A and B are two cells or two values of one factor. Every cell of a block plays
  the block's seed, so the contrast is paired on the seeds both sides played: d = A - B at each seed, a side's
  figure being the mean of its cells' seed means (as the report's estimates are means of seed means); games
  with an unknown result are left out.

math: the report's interval of mean(d) over m seeds has half-width t(m-1) S_m / sqrt(m), S_m the SD of d over
  them. The pilot's SD s (n seeds) is itself uncertain: planning as if it were the true SD reaches the target
  about half the time. The plan grows the pilot's folder (its n seeds kept, m - n new), so
  (m-1) S_m^2 = (n-1) s^2 + sigma^2 X with X ~ chi2(m-n), and what the pilot knows of sigma is
  sigma^2 = (n-1) s^2 / Y with Y ~ chi2(n-1): X/Y is an F ratio, so the chance that m blocks reach a target
  half-width h is exact for normal d. m is the fewest blocks (at least the pilot's, and {MIN_SEEDS}, the fewest an
  interval is shown for) whose chance is at least --assurance. An effect D is planned on the power of m blocks
  (noncentral t) averaged over the same distribution of sigma, at least --power.

cost: the dry run of the printed command (as run.dry_run=true prints it): units kept and new, and the new part's
  estimate and upper bound, from the pilot's measured calls and tokens per game, model and role; prices from
  conf/ as the grid composes today (a manifest records none).

exit codes: 0 planned (nothing is run or spent), 1 a usage error, not a sweep folder, or a pilot or contrast
  that cannot be planned from (one line says why)."""

REHEARSAL = {"sim": "the simulated provider", "local": "the bundled local model"}


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
    p.add_argument("--assurance", type=share, default=0.8,
                   help="the chance the planned sweep reaches --target-halfwidth (default 0.8)")
    p.add_argument("--power", type=share, default=0.8, help="the chance of finding --effect (default 0.8)")
    p.add_argument("--level", type=share, default=LEVEL, help=f"the intervals' confidence level (default {LEVEL})")
    return p


def needs(pilot: Pilot, args: argparse.Namespace) -> tuple[int, list[str]]:
    """The blocks the goal needs, and its lines: the goal met, and what planning on the SD as known would give."""
    if args.target_halfwidth:
        h = args.target_halfwidth
        m = pilot.blocks_for_halfwidth(h, args.assurance)
        naive = pilot.blocks_if_known(h)
        return m, [
            f"blocks needed: {m} for a {pilot.level:.0%} half-width of {h:g} with assurance {args.assurance:g}: the "
            f"pilot's folder grown to {m} blocks reaches it with probability {pilot.reach(m, h):.3f} (math below)",
            f"  were the SD exactly the pilot's, {naive} blocks would give {pilot.halfwidth(naive):.4g}, and reach "
            f"the target with probability {pilot.reach(naive, h):.2f}",
        ]
    d, power = args.effect, args.power
    m = pilot.blocks_for_effect(d, power)
    return m, [f"blocks needed: {m} to find a difference of {d:g} with power {power:g} at the two-sided "
               f"{1 - pilot.level:.2g} level: power {pilot.power(m, d):.3f}, averaged over what the pilot knows of "
               f"the SD; expected half-width {pilot.halfwidth(m):.4g}"]


def describe_pilot(pilot: Pilot, path: Path) -> list[str]:
    n = pilot.seeds
    dropped = f"; {pilot.dropped} seed(s) only one side has a figure for are left out" if pilot.dropped else ""
    shown = (f"{pilot.level:.0%} CI [{pilot.low:.4g}, {pilot.high:.4g}] (t over seeds, as the report)"
             if pilot.low is not None else f"no interval: {n} seeds, fewer than the {MIN_SEEDS} an interval needs")
    return [
        f"pilot {path}: {pilot.blocks} blocks; metric {pilot.metric}; known games only, as in the report",
        f"  A = {pilot.a.text}",
        f"  B = {pilot.b.text}",
        f"  paired on the {n} seeds both sides played (every cell of a block plays its seed){dropped}",
        f"  mean A - B {pilot.mean:.4g}, {shown}",
        f"  SD of A - B between seeds: {pilot.sd:.4g} (from {n} seeds)",
    ]


def hydra_value(value: object) -> str:
    """A recorded value as a Hydra override writes it (strings bare where they can be)."""
    if isinstance(value, str) and re.fullmatch(r"[\w.:/-]+", value):
        return value
    return json.dumps(value)


def grown_overrides(manifest: Manifest, path: Path, blocks: int) -> list[str]:
    """The overrides that grow the pilot's folder to ``blocks`` blocks: its grid and provider, its listed seeds
    continued, its folder, and every determining value the pilot was run with that the grid does not give today."""
    grid = manifest.config.grid
    base = [f"+grid={grid.name}", *([f"provider={manifest.config.provider}"] * (manifest.config.provider != "default")),
            f"grid.blocks={blocks}", f"run.dir={path}"]
    if grid.seeds:
        more = range(max(grid.seeds) + 1, max(grid.seeds) + 1 + blocks - len(grid.seeds))
        base.append(f"grid.seeds={hydra_value([*grid.seeds, *more][:blocks])}")
    kept = [f"{field}={hydra_value(value)}" for field, value, _ in
            changed_fields(manifest, describe(compose_sweep(base), manifest.created))
            if not field.startswith("components.")]  # a text's digest: no override restores it
    sweep = compose_sweep(base + kept)
    if left := changed_fields(manifest, describe(sweep, manifest.created)):
        raise PlanError(f"the pilot's {left[0][0]} was {left[0][1]!r}, which no override of grid {grid.name} restores "
                        f"({len(left)} field(s) differ): plan from a pilot run with the grid as conf/ gives it")
    return base + kept


def cost(manifest: Manifest, path: Path, blocks: int) -> list[str]:
    """The printed command, and its dry run (the plan line, the new units' estimate and bound)."""
    overrides = grown_overrides(manifest, path, blocks)
    sweep: ResolvedSweep = compose_sweep([*overrides, "run.dry_run=true"])
    lines = [f"design: the pilot's folder grown to {blocks} blocks (its games kept, never paid again): "
             f"python -m bargain_ray {shlex.join(overrides)}"]
    if manifest.config.provider in REHEARSAL:
        lines.append(f"  rehearsal: the pilot played {REHEARSAL[manifest.config.provider]} "
                     f"(provider={manifest.config.provider}): its spread and tokens are not the real models'; size "
                     f"the real sweep from a pilot on them (to grow this one, add the provider.settings it ran with: "
                     f"a manifest records none)")
    return [*lines, *dry_run(sweep, path, plan(sweep, path)).splitlines()]


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if not (args.pilot / MANIFEST).is_file():
        print(f"error: {args.pilot} is not a sweep folder: no {MANIFEST}", file=sys.stderr)
        return ExitCode.USER_ERROR
    try:
        sweep = read_sweep(args.pilot)
        pilot = read_pilot(sweep, args.metric, args.contrast, args.level)
        blocks, lines = needs(pilot, args)
        costed = cost(sweep.manifest, args.pilot, blocks)
    except ConfigError as exc:
        print(f"error: the pilot's grid does not compose from conf/ today: {'; '.join(exc.problems)}", file=sys.stderr)
        return ExitCode.USER_ERROR
    except (OSError, ValueError, ChangedConfig) as exc:  # PlanError, an unreadable manifest or table, a refused growth
        print(f"error: {exc}", file=sys.stderr)
        return ExitCode.USER_ERROR
    print("\n".join([
        *describe_pilot(pilot, args.pilot), *lines,
        "assumptions: d is normal between seeds (the chance above is exact then); the new blocks play the pilot's "
        "cells; seeds that lose a side to an unknown game lower the pairs",
        *costed]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
