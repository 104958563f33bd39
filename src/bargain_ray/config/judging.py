"""The composed config of ``python -m bargain_ray.judge FOLDER [key=value ...]`` (``conf/judge.yaml``): the panel
that reads a sweep's finished free-text transcripts again, the provider it is called through, and the run's knobs.

The panel's fields (who reads, how often, in which variants) determine the reads, so they are the judging run's
fingerprint (``design.judging``); the provider's settings and ``run`` are runtime knobs, as in a sweep.
"""

from __future__ import annotations

from pydantic import Field, model_validator

from bargain_ray.config.base import Strict
from bargain_ray.config.schema import ModelConfig, ProviderConfig, RunConfig

MAX_REPEATS = 20
"""Reads of one transcript by one reader in one variant at most (ours: a self-consistency estimate needs a few)."""


class Panel(Strict):
    """Who reads each finished transcript again, how often and how (ours: seed 004 has one observer, read once)."""

    game_observer: bool = True
    """The game's own observer (its model as the game called it) reads each transcript again."""
    observers: dict[str, ModelConfig] = {}
    """Other observers, by a letter of their own (``+model@panel.observers.G=gpt-5-mini``): models of other
    families, each reading every transcript."""
    repeats: int = Field(2, ge=1, le=MAX_REPEATS)
    """Reads of each transcript by each reader in each variant: two or more measure a reader's self-consistency."""
    swap: bool = True
    """Each transcript is also read with the parties' labels exchanged (the party that opened shown as the other)."""
    hide_models: bool = True
    """Reads never name a party's model (as the game's own observer never saw one); false names it after each
    party's label."""

    @model_validator(mode="after")
    def _check(self) -> Panel:
        if not self.game_observer and not self.observers:
            raise ValueError("the panel has no reader: keep panel.game_observer=true or add an observer, e.g. "
                             "+model@panel.observers.G=gpt-5-mini")
        return self


class JudgeConfig(Strict):
    """What ``conf/judge.yaml`` composes; ``run.dir`` is the judge's positional FOLDER, never a key."""

    panel: Panel = Panel()
    provider: ProviderConfig = ProviderConfig()
    run: RunConfig = RunConfig(batch_api=True)

    @model_validator(mode="after")
    def _check(self) -> JudgeConfig:
        if self.run.dir is not None:
            raise ValueError(f"run.dir={self.run.dir}: the judge reads the sweep folder given as its first argument "
                             "and writes into its judging/ folder; drop run.dir")
        return self
