"""``python -m bargain_ray.check +grid=NAME [overrides]``: what each game of a grid offers, before any call.

Per game and condition: the zone of agreement (or none: no deal beats both fallbacks), the Pareto frontier's size
and range, the Nash and Kalai points, each side's best and worst deal and what an equal split gives
(``design.scenario``). ``--svg DIR`` writes each two-role frontier as an SVG. A grid with a game no deal can win
for every side exits 1 unless ``run.allow_no_zone=true``, as the sweep itself refuses it.
"""

from __future__ import annotations

import sys
from pathlib import Path

from bargain_ray.analysis import svg
from bargain_ray.analysis.commands import Parser
from bargain_ray.config.errors import ConfigError
from bargain_ray.core.status import ExitCode
from bargain_ray.design.resolved import compose_sweep
from bargain_ray.design.scenario import CellCheck, check_lines, check_sweep, no_zone_refusal


def parser() -> Parser:
    p = Parser(prog="python -m bargain_ray.check", description=__doc__.split("\n\n")[1].replace("``", ""),
               epilog="Exit codes: 0 every game has a zone of agreement (or run.allow_no_zone=true), 1 a usage or "
                      "config error, or a game no deal can win for every side (one line says which).")
    p.add_argument("overrides", nargs="+", metavar="+grid=NAME [key=value ...]", help="as the sweep command takes them")
    p.add_argument("--svg", type=Path, metavar="DIR", help="write each two-role frontier to DIR as an SVG")
    return p


def write_svg(check: CellCheck, folder: Path) -> Path | None:
    """The frontier of a two-role continuous space drawn to ``folder`` (its Nash point and fallbacks marked)."""
    if check.space is None:
        return None
    space = check.space.utility_space()
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / (check.cell.replace(" ", "_") + ".svg")
    target.write_text(svg.frontier(space.frontier, [], space.disagreement, space.nash, space.max_welfare,
                                   space.ranges, space.roles, check.cell))
    return target


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        sweep = compose_sweep(args.overrides)
    except ConfigError as exc:
        for line in exc.problems:
            print(f"error: {line}", file=sys.stderr)
        return ExitCode.USER_ERROR
    checks = check_sweep(sweep)
    print(check_lines(checks))
    for check in checks:
        if args.svg is not None and (drawn := write_svg(check, args.svg)):
            print(f"frontier of {check.cell}: {drawn}")
    refused = None if sweep.run.allow_no_zone else no_zone_refusal(checks)
    if refused:
        print(f"error: {refused}", file=sys.stderr)
        return ExitCode.USER_ERROR
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
