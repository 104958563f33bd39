"""``python -m bargain_ray.judge FOLDER [key=value ...] [--human FILE]``: read a sweep's finished free-text games
again with a panel of observers and say how far they agree.

The panel (``conf/judge.yaml``: the game's own observer again, observers of other model families, repeats, the
parties' labels exchanged, models never named) reads each game's final transcript through the same clients, limiter,
budget and journals as a sweep, in FOLDER/judging/; the same command again resumes and pays no read twice. The games
and their recorded outcomes are never changed. It prints Cohen's kappa per pair, Fleiss' kappa and Krippendorff's
alpha overall with intervals, each reader's self-consistency and swap flips, the readers that share a model with a
party and, given --human, the agreement with human labels (docs/judging.md).
"""

from __future__ import annotations

import time

STARTED = time.monotonic()
"""When the command started (its start-up line counts from here, as ``bargain_ray.__main__``'s does)."""

import signal  # noqa: E402 (after the clock)
import sys  # noqa: E402
from functools import partial  # noqa: E402
from pathlib import Path  # noqa: E402

if __name__ == "__main__":  # Ctrl-C or SIGTERM while the imports below load: 130/143 and one line
    from bargain_ray.execution.signals import STOP_SIGNALS, end_command

    for _signum in STOP_SIGNALS:
        signal.signal(_signum, lambda signum, frame: end_command(signum))

from bargain_ray.analysis.commands import Parser, count, hint, share  # noqa: E402
from bargain_ray.analysis.intervals import LEVEL, RESAMPLES, Bootstrap  # noqa: E402
from bargain_ray.analysis.judging import BadLabels, Judging, read_label_file  # noqa: E402
from bargain_ray.config import compose_command  # noqa: E402
from bargain_ray.config.errors import ConfigError, validated  # noqa: E402
from bargain_ray.config.judging import JudgeConfig  # noqa: E402
from bargain_ray.core.status import ExitCode  # noqa: E402
from bargain_ray.design.resolved import typed_keys  # noqa: E402
from bargain_ray.store import MANIFEST, index_latest  # noqa: E402
from bargain_ray.store.judging import read_labels, read_reads, write_labels  # noqa: E402

COMMAND = "python -m bargain_ray.judge"


def parser() -> Parser:
    p = Parser(prog=COMMAND, description=__doc__.split("\n\n")[0].replace("``", ""),
               epilog="Exit codes: 0 every read made, 1 a usage or config error (nothing was read), 2 reads left "
                      "unknown (run again), 3 the budget (run.max_cost_usd) reached, 130/143 stopped by a signal.")
    p.add_argument("folder", type=Path, help="sweep folder (holds manifest.json), e.g. outputs/orange-sim")
    p.add_argument("overrides", nargs="*", metavar="key=value",
                   help="the judging config's keys (conf/judge.yaml), e.g. panel.repeats=3 provider=sim")
    p.add_argument("--human", type=Path, metavar="FILE",
                   help="a CSV of human labels: unit_id,allocation_type[,rater] (docs/judging.md)")
    p.add_argument("--resamples", type=count, default=RESAMPLES, help="bootstrap resamples of seeds")
    p.add_argument("--level", type=share, default=LEVEL, help="confidence level of the intervals")
    p.add_argument("--seed", type=int, default=0, help="seed of the bootstrap generator")
    return p


def judge_config(overrides: list[str]) -> JudgeConfig:
    """The judging config ``overrides`` compose (``conf/judge.yaml``), or ConfigError with one line per mistake."""
    return validated(JudgeConfig, compose_command(overrides, partial(typed_keys, schema=JudgeConfig), "judge"))


def fail(problems: list[str]) -> int:
    for line in problems:
        print(f"error: {line}", file=sys.stderr)
    return ExitCode.USER_ERROR


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    folder: Path = args.folder
    if not (folder / MANIFEST).is_file():
        return fail([f"{folder} is not a sweep folder: no {MANIFEST}{hint(COMMAND)}"])
    try:
        config = judge_config(args.overrides)
        humans = read_label_file(args.human, set(index_latest(folder))) if args.human else None
    except (ConfigError, BadLabels) as exc:
        return fail(exc.problems)
    from bargain_ray.execution.judging import run_judging  # Ray and the clients: loaded once the config is sound

    code = run_judging(folder, config, STARTED if argv is None else None)
    reads = None if code == ExitCode.USER_ERROR or config.run.dry_run else read_reads(folder)
    if reads is None or not reads.filter("known").height:
        return code
    if humans is not None:
        write_labels(folder, humans)
    boot = Bootstrap(args.resamples, args.level, args.seed)
    print("\n".join(Judging(reads, boot, humans if humans is not None else read_labels(folder)).lines()))
    return code


if __name__ == "__main__":
    from bargain_ray.execution.signals import command

    sys.exit(command(main))
