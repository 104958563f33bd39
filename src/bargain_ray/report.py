"""python -m bargain_ray.report SWEEP: the metrics, the dataset export and the HTML report of a sweep folder.

Writes SWEEP/dataset/ (seed 002's layout) and SWEEP/report.html; with --by other than the default cells,
SWEEP/report-by-<columns>.html beside them (neither is overwritten).
"""

from __future__ import annotations

import sys
from pathlib import Path

from bargain_ray.analysis.build import DEFAULT_BY
from bargain_ray.analysis.commands import Parser, hint, share
from bargain_ray.analysis.intervals import LEVEL
from bargain_ray.analysis.report import build_report, partial_note
from bargain_ray.core.status import ExitCode
from bargain_ray.store import DATASET, MANIFEST, REPORT

COMMAND = "python -m bargain_ray.report"


def parser() -> Parser:
    p = Parser(prog=COMMAND, description=__doc__.split("\n\n")[0],
               epilog="Exit codes: 0 written, 1 a usage error or not a sweep folder (nothing written).")
    p.add_argument("sweep", type=Path, help="sweep folder (holds manifest.json and journal.jsonl), e.g. outputs/demo")
    p.add_argument("--by", default=",".join(DEFAULT_BY),
                   help=f"comma-separated per-game columns that define a cell (default {','.join(DEFAULT_BY)})")
    p.add_argument("--level", type=share, default=LEVEL, help="confidence level of the intervals")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if not (args.sweep / MANIFEST).is_file():
        print(f"error: {args.sweep} is not a sweep folder: no {MANIFEST}{hint(COMMAND)}", file=sys.stderr)
        return ExitCode.USER_ERROR
    try:
        note = partial_note(args.sweep)
        path = build_report(args.sweep, [c for c in args.by.split(",") if c], args.level)
    except (OSError, ValueError) as exc:  # a missing or non-sweep folder, an unknown column, an unreadable file
        print(f"error: {exc}", file=sys.stderr)
        return ExitCode.USER_ERROR
    if note:
        print(note)
    print(f"report: {path}\ndataset: {path.parent / DATASET}" + ("" if path.name == REPORT else " (default cells)"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
