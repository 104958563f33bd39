"""``python -m bargain_ray.replay FILE.json``: re-score a recorded transcript and print its outcome record.

The file is ``{"game": NAME, "first_speaker": ROLE, "replies": [...],
"overrides": [...]}`` (optionally ``"unit": {...}`` identity fields); the
replies are fed in call order, repairs included, and the outcome record is
printed as one JSON object. ``replay SWEEP UNIT_ID`` replays a game of a sweep
folder from its own journal, under the game config its manifest fixed, and
checks the outcome against the one recorded; ``--export FILE.json`` writes it
as a replay file.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from bargain_ray.analysis.commands import Parser
from bargain_ray.config import choices, compose_dict
from bargain_ray.config.errors import ConfigError, nearest, validation_problems
from bargain_ray.core.records import GameRecord
from bargain_ray.core.status import ExitCode
from bargain_ray.design.fingerprint import game_part
from bargain_ray.play.rescore import SEED_IDENTITY, ReplayFile, outcome_record, recorded_replies, replay_record
from bargain_ray.store import read_manifest
from bargain_ray.store.journal import index_latest, read_at
from bargain_ray.store.paths import DATASET, MANIFEST

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


def read_replay_or_say(path: Path) -> ReplayFile:
    """``read_replay``, but a line of a sweep's dataset (or any JSON Lines file) says what to run instead."""
    if path.suffix == ".jsonl" or DATASET in path.parts:
        folder = next((p for p in path.resolve().parents if (p / MANIFEST).exists()), None)
        raise ConfigError([f"{path} is a sweep's record, not a replay file ({SHAPE}): replay a game of a sweep with "
                           f"`python -m bargain_ray.replay {folder or 'SWEEP_FOLDER'} UNIT_ID` (add --export "
                           "FILE.json to write its replay file)"])
    return read_replay(path)


def recorded_game(folder: Path, unit_id: str) -> tuple[dict[str, Any], GameRecord]:  # free-form: the game config as the manifest fixed it
    """(the game config the manifest fixed for the unit, its latest journaled record), or ConfigError in one line."""
    if not (folder / MANIFEST).exists():
        raise ConfigError([f"{folder} is not a sweep folder (no {MANIFEST}): give a sweep folder and a unit id, or one "
                           "replay file; see `python -m bargain_ray.replay --help`"])
    offset = index_latest(folder).get(unit_id)
    if offset is None:
        raise ConfigError([f"{folder}: no game of unit {unit_id!r} in its journal (games.parquet's unit_id column "
                           "lists them)"])
    record = next(read_at(folder, [offset]))
    part = game_part(read_manifest(folder).components, record.unit.game, record.unit.condition)
    if part is None:
        raise ConfigError([f"{folder}: its manifest holds no game config of {record.unit.game} under "
                           f"{record.unit.condition} (a folder from before they were kept): it cannot be replayed"])
    return part["config"], record


def replay_folder(folder: Path, unit_id: str, export: Path | None) -> int:
    """Replay one game of a sweep folder, print its outcome record, and say whether it is the one recorded."""
    config, record = recorded_game(folder, unit_id)
    replayed = replay_record(config, record)
    if export is not None:
        export.write_text(json.dumps(replay_file(config, record).model_dump(mode="json"), indent=1) + "\n")
    unit = replayed.unit.model_dump(mode="json")
    print(json.dumps({k: unit[k] for k in SEED_IDENTITY} | replayed.outcome.model_dump(mode="json")))
    if replayed.outcome != record.outcome:
        return _fail([f"{folder}: unit {unit_id} replays to {replayed.outcome.status}, the journal recorded "
                      f"{record.outcome.status}: its outcome is not the one recorded (a game changed by the code "
                      "since, or a game whose calls failed)"])
    return 0


def replay_file(config: dict[str, Any], record: GameRecord) -> ReplayFile:  # free-form: the game config as the manifest fixed it
    """The replay file of a journaled game: its game, first speaker, seed, identity and replies, and the overrides
    that make the packaged game config the one it was played with; ConfigError when none can."""
    name = record.unit.game
    overrides = [f"game.{key}={hydra_value(value)}" for key, value in flat(config).items()]
    try:
        ok = compose_dict(f"game/{name}", overrides)["game"] == config
    except ConfigError:
        ok = False
    if not ok:
        raise ConfigError([f"game {name!r} as this folder played it cannot be written as overrides of "
                           f"conf/game/{name}.yaml: replay it from the folder (python -m bargain_ray.replay FOLDER "
                           "UNIT_ID)"])
    unit = record.unit.model_dump(mode="json")
    return ReplayFile(game=name, first_speaker=record.unit.first_speaker, replies=recorded_replies(record),
                      overrides=overrides, seed=record.unit.seed,
                      unit={k: unit[k] for k in SEED_IDENTITY if k != "first_speaker"})


def flat(config: dict[str, Any], prefix: str = "") -> dict[str, Any]:  # free-form: a game config as written
    """``config``'s values by dotted key, nested mappings followed (lists kept whole)."""
    out: dict[str, Any] = {}  # free-form: values of a game config
    for key, value in config.items():
        if isinstance(value, dict) and value:
            out |= flat(value, f"{prefix}{key}.")
        else:
            out[f"{prefix}{key}"] = value
    return out


def hydra_value(value: Any) -> str:  # free-form: a value of a game config
    """``value`` in Hydra's override grammar: strings quoted, lists and mappings in its flow syntax."""
    if isinstance(value, str):
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ",".join(hydra_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}:{hydra_value(v)}" for k, v in value.items()) + "}"
    return repr(value)


def _fail(problems: list[str]) -> int:
    for line in problems:
        print(f"error: {line}", file=sys.stderr)
    return ExitCode.USER_ERROR


def parser() -> Parser:
    p = Parser(prog="python -m bargain_ray.replay", description=__doc__.split("\n\n")[1].replace("``", ""),
               epilog="Exit codes: 0 the outcome printed, 1 a usage error, a file that does not replay, or a folder's "
                      "game that does not replay to its recorded outcome (one line says why).")
    p.add_argument("file", type=Path, metavar="FILE.json|SWEEP", help=f"a replay file: {SHAPE}; or a sweep folder")
    p.add_argument("unit_id", nargs="?", metavar="UNIT_ID", help="with a sweep folder: the unit whose game to replay")
    p.add_argument("--export", type=Path, metavar="FILE.json", help="with a sweep folder: write the game's replay file")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    path = args.file
    try:
        if args.unit_id is not None:
            return replay_folder(path, args.unit_id, args.export)
        if args.export is not None or (path / MANIFEST).exists():
            return _fail([f"give a unit id after the sweep folder: python -m bargain_ray.replay {path} UNIT_ID"
                          + (" --export FILE.json" if args.export else "")])
        spec = read_replay_or_say(path)
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
