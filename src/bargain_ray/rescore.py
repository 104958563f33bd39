"""``python -m bargain_ray.rescore outputs/<sweep>``: recompute every figure of a sweep folder with this code.

Every per-game and per-turn figure is computed again from the journal (each game under the config the
manifest fixed) and published as a new table generation; the manifest records which code computed it;
the journals are never written. A folder a running driver holds is refused. Rebuild the report and the
dataset afterwards with ``python -m bargain_ray.report``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from bargain_ray.analysis.commands import Parser
from bargain_ray.analysis.rescore import NotASweep, Rescored, rescore_folder
from bargain_ray.core.status import ExitCode
from bargain_ray.store import DiskFull, FolderLocked, UnreadableManifest, is_disk_full


def summary(done: Rescored) -> str:
    """What was recomputed, by which code, and what to run next."""
    by, sweep = done.figures.commits()
    other = f" (the sweep started with {sweep})" if done.figures.by_other_code else ""
    kept = f"; {done.kept} games kept their journaled figures (no game config in the manifest)" if done.kept else ""
    tables = ", ".join(f"{name}.parquet {n} rows" for name, n in done.rows.items())
    return (f"rescored {done.games} games of {done.path} with {by}{other}{kept}\n"
            f"tables: {tables} (generation {done.generation}); journals untouched\n"
            f"next: python -m bargain_ray.report {done.path}")


def main(argv: list[str] | None = None) -> int:
    parser = Parser(prog="python -m bargain_ray.rescore", description=__doc__.split("\n\n")[1].replace("``", ""),
                    epilog="Exit codes: 0 rescored, 1 a usage error, not a sweep folder or a folder a driver holds "
                           "(nothing written), 74 the disk is full.")
    parser.add_argument("sweep", type=Path, help="sweep folder (holds manifest.json and journal.jsonl)")
    args = parser.parse_args(argv)
    try:
        done = rescore_folder(args.sweep)
    except (NotASweep, FolderLocked, UnreadableManifest) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return ExitCode.USER_ERROR
    except OSError as exc:
        if not is_disk_full(exc):
            raise
        print(f"error: {DiskFull(args.sweep)}", file=sys.stderr)
        return ExitCode.DISK_FULL
    print(summary(done))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
