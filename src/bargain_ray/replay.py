"""``python -m bargain_ray.replay FILE.json``: re-score a recorded transcript and print its outcome record.

The file is ``{"game": NAME, "first_speaker": ROLE, "replies": [...],
"overrides": [...]}`` (optionally ``"unit": {...}`` identity fields); the
replies are fed in call order, repairs included, and the outcome record is
printed as one JSON object.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from pydantic import ValidationError

from bargain_ray.analysis.commands import Parser
from bargain_ray.config import choices
from bargain_ray.config.errors import ConfigError, nearest, validation_problems
from bargain_ray.core.status import ExitCode
from bargain_ray.play.rescore import ReplayFile, outcome_record

SHAPE = '{"game": NAME, "first_speaker": ROLE, "replies": [...], "overrides": [...]}'


def read_replay(path: Path) -> ReplayFile:
    """The replay file at ``path``, or ConfigError saying in one line what is wrong with it."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError([f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}"]) from None
    try:
        spec = ReplayFile.model_validate_json(text)
    except ValidationError as exc:
        raise ConfigError([f"{path}: {line} (a replay file is {SHAPE})"
                           for line in validation_problems(exc, ReplayFile)]) from None
    games = choices("game")
    if spec.game not in games:
        match = nearest(spec.game, games)
        hint = f"did you mean {match!r}?" if match else f"games: {', '.join(games)}"
        raise ConfigError([f"{path}: no game named {spec.game!r}; {hint}"])
    return spec


def _fail(problems: list[str]) -> int:
    for line in problems:
        print(f"error: {line}", file=sys.stderr)
    return ExitCode.USER_ERROR


def parser() -> Parser:
    p = Parser(prog="python -m bargain_ray.replay", description=__doc__.split("\n\n")[1].replace("``", ""),
               epilog="Exit codes: 0 the outcome printed, 1 a usage error or a file that does not replay (one line "
                      "says why).")
    p.add_argument("file", type=Path, metavar="FILE.json", help=f"a replay file: {SHAPE}")
    return p


def main(argv: list[str] | None = None) -> int:
    path = parser().parse_args(argv).file
    try:
        spec = read_replay(path)
    except ConfigError as exc:
        return _fail(exc.problems)
    try:
        outcome = outcome_record(spec)
    except ConfigError as exc:  # Hydra refused the file's overrides
        return _fail([f"{path}: overrides: {line}" for line in exc.problems])
    except ValidationError as exc:  # the overrides made a game config its family refuses
        return _fail([f"{path}: {line}" for line in validation_problems(exc, None, ("game",))])
    except ValueError as exc:  # a first speaker or a reply the game cannot take
        return _fail([f"{path}: {exc}"])
    print(json.dumps(outcome))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
