"""The judging design: a sweep's finished free-text games crossed with a panel of readers, each read one unit.

Judging is a sweep of its own over an existing folder (``python -m bargain_ray.judge``): this module resolves it
(``judging_sweep``: the panel's models as the run calls them, the judged games' configs, the fingerprint) and lays
out its reads (``plan_reads``), each a ``Unit`` the runner plays like a game: the observer's turn after the
transcript's last message (``games.freetext.reading``). A read is named after the game it reads
(``<unit id>-j<reader><s for swapped><repeat>``) and hashed over everything it reads and who reads it: the judged
unit's hash, the prompt as rendered (instructions, labels, transcript) and the reader's model as called. So a
journaled read is kept only while all of that is unchanged, and a game whose transcript changed is never judged
with reads of the old one.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from bargain_ray.config import RUNTIME_KEYS, ModelConfig, SweepConfig
from bargain_ray.config.errors import ConfigError, validation_problems
from bargain_ray.config.judging import JudgeConfig
from bargain_ray.config.pricing import worst_case_usd
from bargain_ray.core.hashing import digest
from bargain_ray.core.records import GameRecord
from bargain_ray.core.unit import Unit
from bargain_ray.design.fingerprint import game_key, game_part, model_part
from bargain_ray.design.resolved import GameConfig, ResolvedSweep, bind
from bargain_ray.games import Game
from bargain_ray.games.freetext.config import FreeTextConfig
from bargain_ray.games.freetext.engine import Said, State
from bargain_ray.games.freetext.reading import final_verdict, reading_config, reading_state
from bargain_ray.providers.routing import (
    KEYLESS,
    PROVIDERS,
    Provider,
    effective_model,
    model_problems,
    read_provider,
)

JUDGED_FAMILY = "freetext"
"""The family whose outcome is an observer's verdict: the one a panel can read again."""
READER = re.compile(r"^[A-Z]$")
"""A panel observer's letter, as a sweep names its models (one capital)."""

Kind = Literal["observer", "panel"]
"""Who reads: the game's own observer again, or another observer of the panel."""


class JudgedGame(BaseModel):
    """A finished game as its reads need it: where it sits, who played it and what was said."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    unit: Unit
    transcript: tuple[Said, ...]
    first_speaker: str
    recorded: str
    """The allocation type of the game's final verdict: its recorded outcome."""
    observer: str
    """The role of the game's observer."""

    @property
    def parties(self) -> dict[str, str]:
        """role -> the model that played it, the observer aside."""
        return {r: m for r, m in self.unit.models_by_role.items() if r != self.observer}


class Read(BaseModel):
    """One read of the plan: which game, by whom, in which variant, which repeat."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    read_id: str
    judged: str
    reader: str
    """The reader's letter (the game's observer keeps the sweep's letter)."""
    kind: Kind
    swapped: bool
    repeat: int
    same_model: bool
    """The reader's model played one of the game's parties."""


class JudgingSpec(BaseModel):
    """What every runner of a judging run is handed: the judging sweep, its reads and the games they read."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    sweep: ResolvedSweep
    reads: dict[str, Read]
    games: dict[str, JudgedGame]
    names_shown: bool = False
    """Each read names each party's model after its label (``panel.hide_models=false``)."""

    @property
    def provider(self) -> Provider:
        return self.sweep.provider

    def served_at(self, base_url: str) -> JudgingSpec:
        """This run with its provider's server (the simulated provider, the local model) at ``base_url``."""
        return self.model_copy(update={"sweep": self.sweep.served_at(base_url)})

    def reading(self, read_id: str) -> tuple[Game, State]:
        """(the game a read plays: its config as the read shows it, the game after its last message)."""
        read = self.reads[read_id]
        judged = self.games[read.judged]
        config = typed_configs(self.sweep)[game_key(judged.unit.game, judged.unit.condition)]
        named = judged.parties if self.names_shown else None
        shown = reading_config(config, len(judged.transcript), read.swapped, named)
        return bind(shown), State(first_speaker=judged.first_speaker, transcript=judged.transcript)


def judged_configs(sweep: SweepConfig, components: dict[str, object]) -> dict[str, GameConfig]:  # free-form: the manifest's fingerprint JSON
    """The free-text game configs of a sweep, by ``game_key``, as its manifest fixed them."""
    out: dict[str, GameConfig] = {}
    for design in sweep.grid.designs:
        for condition in design.conditions:
            part = game_part(components, design.game, condition)
            if part is not None and part["config"].get("family") == JUDGED_FAMILY:
                out[game_key(design.game, condition)] = FreeTextConfig.model_validate(part["config"])
    return out


def observer_letters(played: SweepConfig, configs: dict[str, GameConfig]) -> set[str]:
    """The letters of the models that observed the judged games (each design's observer role, in every pairing)."""
    out = set()
    for design in played.grid.designs:
        for condition in design.conditions:
            config = configs.get(game_key(design.game, condition))
            if isinstance(config, FreeTextConfig):
                agents = {agent for a in design.assignments if (agent := a.roles.get(config.observer.role))}
                out |= {p[ord(agent) - ord("A")] for p in design.pairings for agent in agents}
    return out


def judging_sweep(played: SweepConfig, configured: dict[str, ModelConfig], components: dict[str, object],  # free-form: the manifest's fingerprint JSON
                  config: JudgeConfig) -> ResolvedSweep:
    """The judging run of a folder whose games ``played`` and ``components`` determined (its manifest's: each model
    as the games called it, without its runtime knobs): the folder's grid, games and models beside the panel's
    observers, the judge's provider and run, and the judging fingerprint. Its ``models`` are the readers only (the
    games' observers, when they read again, and the panel's), as the run calls them: no party is called, so no
    party's key is asked for and no party's price narrows the budget. ``configured`` holds the model file
    (``conf/model``) of each of the sweep's models by letter, where one names it: the price, limits and retries a
    manifest leaves out, and the API a model rerouted to the simulated provider was meant for. ConfigError with one
    line per mistake, before any call."""
    problems = []
    panel = config.panel
    for letter, model in panel.observers.items():
        if not READER.match(letter):
            problems.append(f"panel.observers.{letter}: name an observer by one capital letter, e.g. "
                            f"+model@panel.observers.G={model.name}")
        elif letter in played.models:
            problems.append(f"panel.observers.{letter}: the sweep's models already use letter {letter} "
                            f"({played.models[letter].name}); name this observer with another letter (the sweep's: "
                            f"{', '.join(sorted(played.models))})")
    configs = judged_configs(played, components)
    observers = observer_letters(played, configs) if panel.game_observer else set()
    for letter in sorted(observers):
        model = played.models[letter]
        if model.is_llm and letter not in configured:
            problems.append(f"the game's observer {model.name} (model {letter}) reads again, but no conf/model file "
                            "names it, so its price and limits are unknown: add one, or set panel.game_observer=false")
    try:
        provider = read_provider(config.provider, {**configured, **panel.observers})
    except ValidationError as exc:  # a setting of the provider's
        raise ConfigError(validation_problems(exc, PROVIDERS.get(config.provider.name), ("provider",))) from None
    except ValueError as exc:  # no such provider
        raise ConfigError([str(exc)]) from None
    problems += model_problems(panel.observers, provider)
    for letter in sorted(observers):
        if (routed := played.models[letter].provider) in KEYLESS and routed not in ("strategy", provider.name):
            problems.append(f"provider={provider.name}: the games were played with provider={routed} and the game's "
                            f"observer (model {letter}) reads again as the games called it: judge with "
                            f"provider={routed}, or set panel.game_observer=false")
            break
    if problems:
        raise ConfigError(problems)
    runtime = {letter: {k: v for k, v in m if k in RUNTIME_KEYS} for letter, m in configured.items()}
    written = {letter: m.model_copy(update=runtime.get(letter, {})) for letter, m in played.models.items()}
    written |= panel.observers
    models = {letter: effective_model(written[letter], provider) for letter in sorted(observers | set(panel.observers))}
    sweep = SweepConfig.model_validate(played.model_dump() | {
        "run": config.run.model_dump(), "provider": config.provider.model_dump(),
        "models": {letter: m.model_dump() for letter, m in written.items()}})
    fingerprint = {"panel": {"hide_models": panel.hide_models}} | dict(
        model_part(letter, models[letter]) for letter in sorted(models))
    return ResolvedSweep(config=sweep, provider=provider, models=models, game_configs=configs,
                         components=fingerprint)


def typed_configs(sweep: ResolvedSweep) -> dict[str, FreeTextConfig]:
    """A judging sweep's game configs by ``game_key``, typed as the judged family's (``judging_sweep`` keeps no
    other)."""
    return {key: config for key, config in sweep.game_configs.items() if isinstance(config, FreeTextConfig)}


def judged_game(record: GameRecord, config: FreeTextConfig) -> JudgedGame | None:
    """A finished game of the judged family as its reads need it; None for one with no verdict to read again (a
    format or technical failure: no final verdict was recorded)."""
    recorded = final_verdict(record) if record.outcome.known else None
    if recorded is None:
        return None
    state = reading_state(config, record)
    return JudgedGame(unit=record.unit, transcript=state.transcript, first_speaker=state.first_speaker,
                      recorded=recorded, observer=config.observer.role)


def readers(config: JudgeConfig, game: JudgedGame) -> list[tuple[str, Kind]]:
    """(letter, kind) of every reader of ``game``: its own observer's letter, then the panel's."""
    own: list[tuple[str, Kind]] = [(game.unit.letter_of_role[game.observer], "observer")]
    panel: list[tuple[str, Kind]] = [(letter, "panel") for letter in sorted(config.panel.observers)]
    return [*own, *panel] if config.panel.game_observer else panel


def read_id(judged: str, reader: str, swapped: bool, repeat: int) -> str:
    return f"{judged}-j{reader}{'s' if swapped else ''}{repeat}"


def plan_reads(spec_sweep: ResolvedSweep, config: JudgeConfig, games: list[JudgedGame]) -> JudgingSpec:
    """Every read of the panel over ``games``: each reader, in the order played and (with ``panel.swap``)
    swapped, ``panel.repeats`` times."""
    reads: dict[str, Read] = {}
    for game in games:
        for letter, kind in readers(config, game):
            model = spec_sweep.models[letter]
            for swapped in (False, True) if config.panel.swap else (False,):
                for repeat in range(1, config.panel.repeats + 1):
                    rid = read_id(game.unit.unit_id, letter, swapped, repeat)
                    reads[rid] = Read(read_id=rid, judged=game.unit.unit_id, reader=letter, kind=kind,
                                      swapped=swapped, repeat=repeat,
                                      same_model=model.name in game.parties.values())
    return JudgingSpec(sweep=spec_sweep, reads=reads, games={g.unit.unit_id: g for g in games},
                       names_shown=not config.panel.hide_models)


def read_unit(spec: JudgingSpec, read: Read) -> Unit:
    """The unit the runner plays for ``read``: the judged game's identity (block, seed, cell) with the reader as its
    observer, hashed over what it reads and who reads it."""
    judged = spec.games[read.judged]
    game, state = spec.reading(read.read_id)
    model = spec.sweep.models[read.reader]
    determined = {
        "judged": judged.unit.hash,
        "prompt": digest(game.prompt(state, judged.observer).model_dump(mode="json")),
        "reader": digest(model_part(read.reader, model)[1]),
        "read": [read.kind, read.swapped, read.repeat],
    }
    return judged.unit.model_copy(update={
        "unit_id": read.read_id, "phase": "judging", "models_by_role": {judged.observer: model.name},
        "letter_of_role": {judged.observer: read.reader}, "agent_of_role": {judged.observer: read.reader},
        "hash": digest(determined),
    })


def worst_case(spec: JudgingSpec, reads: list[Read]) -> float:
    """The most ``reads`` can cost: each prompt as rendered, answered at its model's ``max_tokens`` (at the batch
    price where it goes through a batch API), with no repair."""
    total = 0.0
    for read in reads:
        game, state = spec.reading(read.read_id)
        model = spec.sweep.models[read.reader]
        worst = worst_case_usd(model, game.prompt(state, spec.games[read.judged].observer))
        total += model.price.charged(worst, spec.sweep.sends_batched(model))
    return total

