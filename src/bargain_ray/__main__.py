"""``python -m bargain_ray +grid=NAME [overrides]``: run or resume a sweep.

The config is composed with Hydra's compose API rather than ``@hydra.main``, so that every mistake
(an unknown key, a value out of range, a game or provider setting that cannot be played) is one line
``error: ...`` and exit code 1 (``ExitCode.USER_ERROR``) before Ray starts or the sweep folder is written, never a traceback.
"""

from __future__ import annotations

import signal

if __name__ == "__main__":  # Ctrl-C while the imports below load: the process ends as the shell's Ctrl-C ends it, quietly
    signal.signal(signal.SIGINT, signal.SIG_DFL)

import sys
from typing import Any

from pydantic import BaseModel, ValidationError

from bargain_ray.config import SweepConfig, choices, compose_command, conf_dir
from bargain_ray.config.errors import ConfigError, validation_problems
from bargain_ray.core.status import ExitCode
from bargain_ray.design.merge import game_config
from bargain_ray.games import family, load_game
from bargain_ray.providers.local import LocalSettings
from bargain_ray.providers.sim import SimSettings

NO_GRID = "no grid chosen; run e.g. `python -m bargain_ray +grid=demo` (grids are in conf/grid/)"

SETTINGS: dict[str, type[BaseModel]] = {"sim": SimSettings, "local": LocalSettings}
"""The schema of ``provider.settings`` for each ``provider=`` choice that has settings."""


def usage() -> str:
    """``--help``, in the project's words (ours, not Hydra's)."""
    return f"""usage: python -m bargain_ray +grid=NAME [key=value ...]

Runs the sweep of grid NAME in outputs/NAME/ (or run.dir); the same command again resumes it.

grids (conf/grid/ in {conf_dir()}, and ./conf/grid/ if present):
  {", ".join(choices("grid"))}

main keys:
  run.dir=PATH            the sweep folder (default outputs/NAME)
  run.dry_run=true        print the plan and the estimated cost; spend nothing
  run.max_cost_usd=X      a hard cap on the dollars the sweep folder spends
  run.workers=N           GameRunner actors (default 2)
  provider=sim|local      rehearse on the simulated provider, or play the bundled local model
  run.report=false        skip report.html at the end
  any other key of the config, e.g. grid.blocks=2, games.tickets.max_turns=6, models.O.max_tokens=2048

other commands:
  python -m bargain_ray.replay FILE.json     re-score a recorded transcript, print its outcome
  python -m bargain_ray.report SWEEP         metrics, dataset and report.html of a sweep folder
  python -m bargain_ray.view [outputs/NAME]  browse sweeps and transcripts

Keys come from the environment only (ANTHROPIC_API_KEY, OPENAI_API_KEY, or a model's api_key_env)."""


def _game_problems(sweep: SweepConfig) -> list[str]:
    """Every game as each of its conditions plays it, validated by its family's own schema."""
    problems: list[str] = []
    for design in sweep.grid.designs:
        for condition in design.conditions:
            config = game_config(sweep, design.game, condition)
            where = ("games", design.game)
            try:
                load_game(config)
            except ValidationError as exc:
                changed = sweep.conditions[condition].game
                lines = validation_problems(exc, family(str(config["family"])).GAME.Config, where)
                problems += [f"{line} (as condition {condition} plays it)" if changed else line for line in lines]
            except ValueError as exc:  # an unknown family, or a rule the family checks on its own
                problems.append(f"games.{design.game}: {exc}")
    return list(dict.fromkeys(problems))


def _provider_problems(sweep: SweepConfig) -> list[str]:
    schema = SETTINGS.get(sweep.provider.name)
    if schema is None:
        return []
    try:
        schema.model_validate(sweep.provider.settings)
    except ValidationError as exc:
        return validation_problems(exc, schema, ("provider", "settings"))
    return []


def validate(data: dict[str, Any]) -> SweepConfig:
    """The composed config as a sweep, or ConfigError with one line per mistake anywhere in it."""
    if "grid" not in data:
        raise ConfigError([NO_GRID])
    try:
        sweep = SweepConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(validation_problems(exc, SweepConfig)) from None
    problems = _game_problems(sweep) + _provider_problems(sweep)
    if problems:
        raise ConfigError(problems)
    return sweep


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if {"-h", "--help"} & set(args):
        print(usage())
        return 0
    try:
        sweep = validate(compose_command(args))
    except ConfigError as exc:
        for line in exc.problems:
            print(f"error: {line}", file=sys.stderr)
        return ExitCode.USER_ERROR
    from bargain_ray.execution.progress import process_started
    from bargain_ray.execution.sweep import run_sweep  # Ray and the store load only for a config that can run
    from bargain_ray.store import ChangedConfig

    try:  # SIGINT/SIGTERM stop the sweep like Ctrl-C (execution.signals): exit 130/143 with the tables written
        return run_sweep(sweep, process_started() if argv is None else None)  # the command's clock: the process's
    except ChangedConfig as exc:
        print(f"error: {exc}", file=sys.stderr)
        return ExitCode.USER_ERROR


if __name__ == "__main__":
    from bargain_ray.execution.signals import command  # SIGINT/SIGTERM during start-up: exit 130/143, one line

    sys.exit(command(main))
