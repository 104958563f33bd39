"""``python -m bargain_ray +grid=NAME [overrides]``: run or resume a sweep.

The config is composed with Hydra's compose API rather than ``@hydra.main``, so that every mistake
(an unknown key, a value out of range, a game or provider setting that cannot be played) is one line
``error: ...`` and exit code 1 (``ExitCode.USER_ERROR``) before Ray starts or the sweep folder is written, never a traceback.
"""

from __future__ import annotations

import time

STARTED = time.monotonic()
"""When the command started: its first line of Python, the origin of the start-up line. Not the process's start:
launched as ``pip install … && python -m bargain_ray …``, bash runs the command in its own process, which has
lived through the install by then."""

import signal  # noqa: E402 (after the clock: what the command's start-up line counts begins here)
import sys  # noqa: E402

if __name__ == "__main__":  # Ctrl-C or SIGTERM while the imports below load: 130/143 and one line (no traceback)
    from bargain_ray.execution.signals import STOP_SIGNALS, end_command  # the standard library only

    for _signum in STOP_SIGNALS:
        signal.signal(_signum, lambda signum, frame: end_command(signum))

from bargain_ray.config import conf_dir, local_conf_note
from bargain_ray.config.catalog import grid_lines
from bargain_ray.config.compose import show_config
from bargain_ray.config.errors import ConfigError
from bargain_ray.core.status import ExitCode
from bargain_ray.design.resolved import compose_sweep, typed_keys

CFG_PARTS = ("job", "hydra", "all")
"""What ``--cfg`` prints, as Hydra names it: the composed config, Hydra's own node, or both."""


def usage() -> str:
    """``--help``, in the project's words (ours, not Hydra's)."""
    grids = "\n".join(grid_lines())
    return f"""usage: python -m bargain_ray +grid=NAME [key=value ...]
       python -m bargain_ray +grid=NAME [key=value ...] --cfg job|hydra|all

Runs the sweep of grid NAME in outputs/NAME/ (or run.dir); the same command again resumes it.
--cfg job prints the config the command composes and runs nothing (--cfg hydra: the composer's own
settings; --cfg all: both).

grids (conf/grid/ in {conf_dir()}, and ./conf/grid/ if present, whose files win):
{grids}

main keys:
  run.dir=PATH            the sweep folder (default outputs/NAME)
  run.dry_run=true        print the plan and the estimated cost; spend nothing
  run.max_cost_usd=X      a hard cap on the dollars the sweep folder spends
  run.workers=N           GameRunner actors at most (default: one per 64 games with models, 512 without, at most 2)
  provider=sim|local      rehearse on the simulated provider, or play the bundled local model
  run.report=false        skip report.html at the end
  any other key of the config, e.g. grid.blocks=2, games.tickets.max_turns=6, models.O.max_tokens=2048

other commands:
  python -m bargain_ray.check +grid=NAME     each game's zone of agreement, frontier and fallbacks, before any call
  python -m bargain_ray.report SWEEP         metrics, dataset and report.html of a sweep folder
  python -m bargain_ray.view [outputs/NAME]  browse sweeps and transcripts
  python -m bargain_ray.plan PILOT --metric NAME --contrast A-B --target-halfwidth X
                                             size a sweep from a pilot: the blocks a contrast needs
  python -m bargain_ray.rescore SWEEP        recompute every figure of a sweep folder with this code
  python -m bargain_ray.judge SWEEP          read its free-text games again with a panel of observers: agreement
  python -m bargain_ray.replay FILE.json     re-score a recorded transcript, print its outcome
  python -m bargain_ray.replay SWEEP UNIT_ID replay a game of a sweep folder (--export FILE.json: its replay file)
  python -m bargain_ray.analysis.provenance  the source (seed or ours) of every rule, setting and metric

Keys come from the environment only (ANTHROPIC_API_KEY, OPENAI_API_KEY, or a model's api_key_env).
Exit 1 is a usage or config error: nothing was run (or run.on_drift=stop stopped a sweep
whose model drifted: its last line names the model and both versions)."""


def cfg_flag(args: list[str]) -> tuple[str | None, list[str]]:
    """(what ``--cfg``/``-c`` asks to print, or None; the other arguments), or ConfigError for a bad option."""
    rest, part, it = [], None, iter(args)
    for arg in it:
        if arg in ("--cfg", "-c") or arg.startswith("--cfg="):
            part = arg.partition("=")[2] or next(it, "")
            if part not in CFG_PARTS:
                raise ConfigError([f"--cfg takes {', '.join(CFG_PARTS)} (e.g. --cfg job), not {part!r}"])
        elif arg.startswith("-"):
            raise ConfigError([f"unknown option {arg}; the options are --help and --cfg {'|'.join(CFG_PARTS)}"])
        else:
            rest.append(arg)
    return part, rest


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if {"-h", "--help"} & set(args):
        print(usage())
        return 0
    try:
        part, args = cfg_flag(args)
        if part is not None:  # Hydra's habit: print what would run, write nothing
            print(show_config(args, part, typed_keys), end="")
            return 0
        sweep = compose_sweep(args)
    except ConfigError as exc:
        for line in exc.problems:
            print(f"error: {line}", file=sys.stderr)
        return ExitCode.USER_ERROR
    # the runner, then the report; Ray and the store load only for a config that can run
    from bargain_ray import run_sweep
    from bargain_ray.store import ChangedConfig

    if note := local_conf_note(sweep.config.local_conf):
        print(note)
    try:  # SIGINT/SIGTERM stop the sweep like Ctrl-C (execution.signals): exit 130/143 with the tables written
        return run_sweep(sweep, STARTED if argv is None else None)
    except ChangedConfig as exc:
        print(f"error: {exc}", file=sys.stderr)
        return ExitCode.USER_ERROR


if __name__ == "__main__":
    from bargain_ray.execution.signals import command  # SIGINT/SIGTERM during start-up: exit 130/143, one line

    sys.exit(command(main))
