"""The sweep resolved once: every part of the config validated by its own schema and typed, the models as
this run calls them, and the fingerprint a resume compares.

The command line (``python -m bargain_ray``), ``bargain_ray.load_config`` and ``bargain_ray.run_sweep`` all go
through ``resolve``: one path, so a value one refuses the others refuse with the same line. What comes after
(the plan, the units, the estimate, the workers) reads the ``ResolvedSweep`` and validates nothing again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Any, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bargain_ray.config import Condition, GridConfig, ModelConfig, RunConfig, SweepConfig
from bargain_ray.config.errors import ConfigError, non_finite, schema_keys, unknown_key, validated, validation_problems
from bargain_ray.design.fingerprint import components, game_key
from bargain_ray.design.merge import game_config
from bargain_ray.games import Game, families, family
from bargain_ray.providers.routing import (
    PROVIDERS,
    Provider,
    batch_api_of,
    effective_model,
    model_problems,
    read_provider,
)

NO_GRID = "no grid chosen; run e.g. `python -m bargain_ray +grid=demo` (grids are in conf/grid/)"
MAX_UNITS = 200_000
"""Units one sweep may plan (ours): a plan holds every unit (about 2 KB each) and a dry run lists them all."""

if TYPE_CHECKING:  # the families are found when the package loads: a type checker knows what each family's has
    from bargain_ray.games.base import FamilyConfig as GameConfig
else:
    GameConfig = Annotated[Union[tuple(p.GAME.Config for p in families().values())], Field(discriminator="family")]  # noqa: UP007
"""A game config as its family's own schema validated it, told apart by its ``family`` key."""


class ResolvedSweep(BaseModel):
    """A sweep as it will run, resolved from its config by ``resolve`` (build it no other way).

    It answers what ``SweepConfig`` answers (``run``, ``grid``, ``games``, ``conditions``, ``models``), with
    ``models`` as this run calls them and ``provider`` typed, plus each game config typed and the fingerprint.
    It crosses to the workers as JSON and is read back as it was, with nothing resolved again.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    config: SweepConfig
    """The composed config, validated by its schema (game configs and provider settings as written)."""
    provider: Provider
    models: dict[str, ModelConfig]
    """Each model, by letter, as this run calls it (``providers.routing.effective_model``)."""
    game_configs: dict[str, GameConfig]
    """Each game config a condition plays, validated by its family's schema, by ``game_key``."""
    components: dict[str, Any]  # free-form: fingerprint JSON, compared key by key
    """The fingerprint (``design.fingerprint``): free-form JSON, compared key by key on resume."""

    @property
    def run(self) -> RunConfig:
        return self.config.run

    @property
    def grid(self) -> GridConfig:
        return self.config.grid

    @property
    def games(self) -> dict[str, dict[str, Any]]:  # free-form: as written; game_configs holds them typed
        """Each game config by name, as written (before a condition's overrides)."""
        return self.config.games

    @property
    def conditions(self) -> dict[str, Condition]:
        return self.config.conditions

    def game(self, name: str, condition: str) -> Game:
        """The game ``name`` as ``condition`` plays it, bound to its typed config."""
        return bind(self.game_configs[game_key(name, condition)])

    def sends_batched(self, model: ModelConfig) -> bool:
        """Whether ``model``, as this run calls it, goes through a batch API: its own ``batch_api``, else
        ``run.batch_api``, where its API has one. Asked by the batcher and by the dry run's estimate alike."""
        wanted = self.run.batch_api if model.batch_api is None else model.batch_api
        return wanted and batch_api_of(model, self.provider) is not None

    def served_at(self, base_url: str) -> ResolvedSweep:
        """This sweep with its provider's server (the simulated provider, the local model) at ``base_url``."""
        settings = self.provider.settings.model_copy(update={"base_url": base_url})
        return self.model_copy(update={"provider": self.provider.model_copy(update={"settings": settings})})


def read_config(data: dict[str, Any]) -> SweepConfig:  # free-form: Hydra's composed config, before validation
    """The composed config validated by its schema, or ConfigError with one line per mistake."""
    if "grid" not in data:
        raise ConfigError([NO_GRID])
    return validated(SweepConfig, data)


def _game_configs(config: SweepConfig) -> tuple[dict[str, dict[str, Any]], dict[str, GameConfig], list[str]]:  # free-form: game configs as written (the fingerprint's part), typed beside them
    """(each game config as written, as its family's schema reads it, one line per mistake), by ``game_key``."""
    written: dict[str, dict[str, Any]] = {}  # free-form: game configs as written
    typed: dict[str, GameConfig] = {}
    problems: list[str] = []
    for design in config.grid.designs:
        for condition in design.conditions:
            key, raw = game_key(design.game, condition), game_config(config, design.game, condition)
            written[key] = raw
            try:
                schema = family(str(raw.get("family"))).GAME.Config
                typed[key] = schema.model_validate(raw)
            except ValidationError as exc:
                lines = validation_problems(exc, schema, ("games", design.game))
                changed = config.conditions[condition].game
                problems += [f"{line} (as condition {condition} plays it)" if changed else line for line in lines]
            except ValueError as exc:  # an unknown family, or a rule the family checks on its own
                problems.append(f"games.{design.game}: {exc}")
    return written, typed, list(dict.fromkeys(problems))


def _strategy_problems(config: SweepConfig, typed: dict[str, GameConfig]) -> list[str]:
    """One line per mistake in a strategy agent's parameters: a key no strategy of the families it plays reads (the
    nearest one they read named), a value one of them refuses (``Params`` of ``games/<family>/strategy.py``, each
    reading the keys it has); and per model that is no strategy agent but sets some."""
    problems = [f"models.{letter}.strategy: only a strategy agent (provider: strategy) reads it; remove it"
                for letter, model in config.models.items() if model.is_llm and model.strategy]
    plays: dict[str, set[str | None]] = {}  # None: a game config that could not be read (its own line says why)
    for design in config.grid.designs:
        for letter in {letter for pairing in design.pairings for letter in pairing}:
            plays.setdefault(letter, set()).update(
                typed[k].family if (k := game_key(design.game, c)) in typed else None for c in design.conditions)
    for letter, names in sorted(plays.items()):
        params, path = config.models[letter].strategy, ("models", letter, "strategy")
        if not params or None in names:
            continue
        schemas = [family(str(name)).GAME.strategy.Params for name in sorted(map(str, names))]
        known = {key for schema in schemas for key in schema.model_fields}
        problems += [unknown_key([*path, key], len(path), known) for key in params if key not in known]
        for schema in schemas:
            try:
                schema.model_validate({k: v for k, v in params.items() if k in schema.model_fields})
            except ValidationError as exc:
                problems += validation_problems(exc, schema, path)
    return list(dict.fromkeys(problems))


def _provider(config: SweepConfig) -> tuple[Provider | None, list[str]]:
    """The typed ``provider`` block, or the lines that say why it cannot be read."""
    try:
        return read_provider(config.provider, config.models), []
    except ValidationError as exc:
        return None, validation_problems(exc, PROVIDERS.get(config.provider.name), ("provider",))
    except ValueError as exc:
        return None, [str(exc)]


def _size_problems(config: SweepConfig) -> list[str]:
    """The plan is held whole: a grid of more units than ``MAX_UNITS`` is refused before one is made."""
    grid = config.grid
    cells = sum(len(d.cell_labels()) for d in grid.designs)
    if cells * grid.blocks <= MAX_UNITS:
        return []
    return [f"grid.blocks={grid.blocks}: {cells * grid.blocks} units ({cells} cells a block) is more than one sweep "
            f"plans (at most {MAX_UNITS}, ours); lower grid.blocks or split the grid into sweeps of their own"]


def bind(config: GameConfig) -> Game:
    """The game of a validated family config (its family named by its ``family`` field)."""
    return family(config.family).GAME(config)


def resolve(data: dict[str, Any] | SweepConfig | ResolvedSweep) -> ResolvedSweep:  # free-form: Hydra's composed config, before validation
    """The sweep of a composed config (or of a ``SweepConfig``), or ConfigError naming every mistake in it."""
    if isinstance(data, ResolvedSweep):
        return data
    config = data if isinstance(data, SweepConfig) else read_config(data)
    if isinstance(data, SweepConfig) and (unbounded := non_finite(config.model_dump())):
        raise ConfigError(unbounded)  # what no schema of ours read yet: game configs, provider settings
    written, typed, problems = _game_configs(config)
    problems += _strategy_problems(config, typed)
    provider, more = _provider(config)
    more += _size_problems(config)
    if provider is not None:
        more += model_problems(config.models, provider)
    if problems or more or provider is None:
        raise ConfigError(problems + more)
    models = {letter: effective_model(m, provider) for letter, m in config.models.items()}
    games = {key: bind(c) for key, c in typed.items()}
    return ResolvedSweep(config=config, provider=provider, models=models, game_configs=typed,
                         components=components(written, games, models))


def typed_keys(base: dict[str, Any], path: Sequence[str], schema: type[BaseModel] = SweepConfig) -> list[str] | None:  # free-form: Hydra's composed config, before validation
    """The keys allowed right below ``path``, by the schema that reads it: a game's family schema under
    ``games.<name>``, the chosen provider's settings under ``provider.settings``, the families' strategies under
    ``models.<letter>.strategy``, else the command's own schema (``schema``: the sweep's, or the judge's;
    ``config.compose.KeysOf``)."""
    if len(path) >= 2 and path[0] == "provider" and path[1] == "settings":
        chosen = PROVIDERS.get(str((base.get("provider") or {}).get("name")))
        return schema_keys(chosen, path[1:]) if chosen else None
    if len(path) == 3 and path[0] == "models" and path[2] == "strategy":  # what any family's strategy reads
        return sorted({key for p in families().values() for key in p.GAME.strategy.Params.model_fields})
    if len(path) >= 2 and path[0] == "games":
        written = (base.get("games") or {}).get(path[1])
        try:
            name = written.get("family") if isinstance(written, dict) else None
            return schema_keys(family(str(name)).GAME.Config, path[2:])
        except ValueError:  # no such game or family: the sweep's schema names what there is
            return None
    return schema_keys(schema, path)


def compose_sweep(overrides: Sequence[str]) -> ResolvedSweep:
    """What ``python -m bargain_ray *overrides`` runs: composed (a key a schema knows added as ``+key``) and
    resolved, or ConfigError with one line per mistake."""
    from bargain_ray.config.compose import compose_command  # Hydra: loaded where a config is composed, not in actors

    return resolve(compose_command(list(overrides), typed_keys))


def load_config(grid: str, overrides: Sequence[str] = ()) -> ResolvedSweep:
    """The sweep of ``+grid=<grid>`` with Hydra ``overrides``, composed and checked exactly as the command line
    does (``python -m bargain_ray +grid=<grid> *overrides``): the same value is refused with the same line."""
    return compose_sweep([f"+grid={grid}", *overrides])
