"""The design grid expanded into units: one unit is one game."""

from __future__ import annotations

import hashlib
import inspect
import json
import random
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel, ConfigDict

from bargain_ray.config import RUNTIME_KEYS, ModelConfig, SweepConfig
from bargain_ray.games import family


class Unit(BaseModel):
    """Everything that identifies one game and, through ``hash``, determines it."""

    model_config = ConfigDict(frozen=True)

    unit_id: str
    experiment: str
    game: str
    family: str
    block: int
    position: int
    phase: str = "main"
    condition: str
    pairing: str
    assignment: int
    cell: str
    seed: int
    first_speaker: str | None
    models_by_role: dict[str, str]
    model_of_role: dict[str, str]
    agent_of_role: dict[str, str]
    hash: str


def deep_merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in extra.items():
        out[k] = deep_merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def game_config(sweep: SweepConfig, game: str, condition: str) -> dict[str, Any]:
    """The game config as a condition plays it."""
    return deep_merge(sweep.games[game], sweep.conditions[condition].game)


def effective_model(sweep: SweepConfig, letter: str) -> ModelConfig:
    """A model as this run calls it: ``provider=sim|local`` reroutes every LLM."""
    model = sweep.models[letter]
    if sweep.provider.name != "default" and model.is_llm:
        return model.model_copy(update={"provider": sweep.provider.name, "api_key_env": None, "base_url": None})
    return model


def digest(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:16]


def components(sweep: SweepConfig) -> dict[str, Any]:
    """What determines games, by name: compared on resume to name what changed."""
    out: dict[str, Any] = {}
    for d in sweep.grid.designs:
        for c in d.conditions:
            cfg = game_config(sweep, d.game, c)
            source = inspect.getsource(family(cfg["family"]).prompts)  # the wording
            out[f"game {d.game} under condition {c}"] = {"config": cfg, "prompts": digest(source)}
    for letter in sorted(sweep.models):
        m = effective_model(sweep, letter).model_dump(mode="json", exclude=set(RUNTIME_KEYS))
        out[f"model {letter} ({m['name']})"] = m
    return out


def units(sweep: SweepConfig, created: str) -> Iterator[Unit]:
    """Every unit of the grid, block by block, each block in a seeded shuffled order."""
    grid = sweep.grid
    parts = {name: digest(part) for name, part in components(sweep).items()}
    model_parts = {letter: next(v for k, v in parts.items() if k.startswith(f"model {letter} ")) for letter in sweep.models}
    for block in range(1, grid.blocks + 1):
        cells = []
        for d in grid.designs:
            for cond in d.conditions:
                key = f"game {d.game} under condition {cond}"
                for pairing in d.pairings:
                    for a in d.assignments:
                        speakers = [a.first_speaker] if a.first_speaker else d.first_speakers
                        for speaker in speakers:
                            cells.append((d, cond, key, pairing, a, speaker))
        random.Random(f"{grid.seed}-{block}").shuffle(cells)
        seed = grid.block_seed(block)
        for position, (d, cond, key, pairing, a, speaker) in enumerate(cells, start=1):
            agent_of_role = dict(a.roles)
            letters = {role: pairing[ord(agent) - ord("A")] for role, agent in agent_of_role.items()}
            models = {role: effective_model(sweep, letter).name for role, letter in letters.items()}
            varied = len(d.first_speakers) > 1 and not a.first_speaker
            suffix = f"-f{speaker}" if varied and speaker else ""
            cell = f"{cond}|{pairing}|a{a.id}" + (f"|{speaker}" if varied and speaker else "")
            unit_id = (
                f"{grid.prefix}-{grid.experiment}-{created}-b{block:02d}-p{position:02d}"
                f"-{pairing.lower()}-a{a.id}{suffix}"
            )
            determined = {
                "game": parts[key],
                "models": {role: model_parts[letter] for role, letter in letters.items()},
                "seed": seed,
                "first_speaker": speaker,
            }
            yield Unit(
                unit_id=unit_id,
                experiment=grid.experiment,
                game=d.game,
                family=sweep.games[d.game]["family"],
                block=block,
                position=position,
                condition=cond,
                pairing=pairing,
                assignment=a.id,
                cell=cell,
                seed=seed,
                first_speaker=speaker,
                models_by_role=models,
                model_of_role=letters,
                agent_of_role=agent_of_role,
                hash=digest(determined),
            )
