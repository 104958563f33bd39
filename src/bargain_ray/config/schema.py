"""Pydantic models of the composed Hydra config: every error before any call."""

from __future__ import annotations

import hashlib
from typing import Annotated, Any, Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from bargain_ray.config.base import Strict
from bargain_ray.config.pricing import Price

# Every numeric knob carries its range here, so a bad value is refused when the config is read,
# before Ray starts or the sweep folder is written (issue 10.9); no float is NaN or infinite (``Strict``).

INT64 = 2**63
"""Seeds are 64-bit signed integers in every table (parquet ``Int64``)."""
MAX_BLOCKS = 100_000
"""Replicate blocks a grid may have (ours): with the cells of a block, what one plan can hold (``design.resolved``)."""
Seed = Annotated[int, Field(ge=-INT64, le=INT64 - 1)]
MAX_WAIT_S = 600.0
"""The longest the runner waits at once (ours: ten minutes): a retry's backoff, a batch's gathering and each of its
polls, a wait a provider announces (``clients.headers``: one longer fails its call, left unknown for a resume)."""
MIN_PER_MINUTE = 60.0 / MAX_WAIT_S
"""The lowest rate a limit may have: one request's (one token's) refill takes at most ``MAX_WAIT_S``."""
MAX_CALL_S = 3600.0
"""The longest one attempt of a call may take (``Retry.timeout_s``; ours: an hour)."""
MAX_ATTEMPTS = 100
"""The most attempts a call may be given (``Retry.max_attempts``; ours)."""
BlockSeeds = Literal["grid.seed + block", "sha256(grid.seed, block)"]
"""How a grid without listed seeds gives each block its seed; a sweep folder's manifest records which (one without
the record was written before hashing, with ``OFFSET``)."""
OFFSET: BlockSeeds = "grid.seed + block"
HASHED: BlockSeeds = "sha256(grid.seed, block)"
HASHED_FROM = "20261205"
"""Sweep folders created from this date on (YYYYMMDD) draw hashed block seeds, unless their manifest says otherwise."""


def block_seeds_of(created: str) -> BlockSeeds:
    """The rule of a folder created on ``created`` (YYYYMMDD) whose manifest records none yet: ``HASHED`` from
    ``HASHED_FROM`` on, so a folder written before keeps the seeds it played."""
    return HASHED if created >= HASHED_FROM else OFFSET


def hashed_seed(seed: int, block: int) -> int:
    """A block's seed from the first 63 bits of sha256 of ``"<grid seed>:<block>"``: grid seeds that differ by less
    than the number of blocks share no block seed (as ``seed + block`` would)."""
    return int.from_bytes(hashlib.sha256(f"{seed}:{block}".encode()).digest()[:8], "big") >> 1


class Rates(Strict):
    """Requests and tokens per minute; None is unlimited."""

    requests_per_minute: float | None = Field(None, ge=MIN_PER_MINUTE)
    input_tokens_per_minute: float | None = Field(None, ge=MIN_PER_MINUTE)
    output_tokens_per_minute: float | None = Field(None, ge=MIN_PER_MINUTE)


class Limits(Rates):
    """Provider limits for one (provider, key, model); runtime knobs, not in the unit hash."""

    max_in_flight: int = Field(64, ge=1)


class Retry(Strict):
    """Retries owned by the runner (SDK retries are off); runtime knobs."""

    max_attempts: int = Field(6, ge=1, le=MAX_ATTEMPTS)
    initial_s: float = Field(1.0, ge=0, le=MAX_WAIT_S)
    max_s: float = Field(60.0, ge=0, le=MAX_WAIT_S)
    timeout_s: float = Field(600.0, gt=0, le=MAX_CALL_S, description=(
        "seconds one attempt may take, from sending the request to the last byte of the reply (ours: a deadline "
        "per attempt, however slowly the reply comes; each attempt has its own)"))


STRATEGY = "strategy"
"""The ``provider`` of a strategy agent: computed replies, no API."""
HUMAN = "human"
"""The ``provider`` of a human seat: a person's replies, typed in the seat page (``seats``), no API."""
NO_API = (STRATEGY, HUMAN)
"""Providers whose replies no model API answers."""


class ModelConfig(Strict):
    """A model as configured in ``conf/model/*.yaml``; code never names a model."""

    name: str = Field(description="the model id the provider knows, or the strategy's name")
    provider: str = Field(description=(
        "the model API it is called through (a name of clients.registry, checked when the sweep is resolved), "
        "or strategy for a strategy agent"))
    max_tokens: int = Field(4096, ge=1)
    params: dict[str, Any] = {}  # free-form: provider request params, passed through as sent
    base_url: str | None = None
    api_key_env: str | Literal[False] | None = None
    """The environment variable of the model's key; None: its API's (``ANTHROPIC_API_KEY``, ``OPENAI_API_KEY``);
    false: no key, for an OpenAI-compatible server that takes none (a local vLLM or llama.cpp; ours)."""
    structured_output: bool = False
    batch_api: bool | None = Field(None, description="send through the provider's batch API; None: run.batch_api")
    strategy: dict[str, Any] = {}  # free-form: as written (the fingerprint's part); each family's strategy types it
    """A strategy agent's parameters, checked against the ``Params`` of each family's strategy it plays when the
    sweep is resolved (``design.resolved``)."""
    price: Price = Price()
    limits: Limits = Limits()
    retry: Retry = Retry()

    @field_validator("api_key_env")
    @classmethod
    def _keyless_compatible_only(cls, value: str | Literal[False] | None, info: ValidationInfo) -> str | Literal[False] | None:
        provider = info.data.get("provider")
        if value is False and provider != "openai_compatible":
            raise ValueError(f"no key is for a provider: openai_compatible server that takes none, not provider "
                             f"{provider!r}; remove it to read the provider's key variable")
        return value

    @property
    def is_llm(self) -> bool:
        return self.provider not in NO_API

    @property
    def is_human(self) -> bool:
        return self.provider == HUMAN


RUNTIME_KEYS = ("limits", "retry", "batch_api", "price")
"""Model fields that change how a call is made or what it costs, never what a game is."""


class ProviderConfig(Strict):
    """``provider=`` group: ``default`` keeps each model's own provider."""

    name: str = "default"
    settings: dict[str, Any] = {}  # free-form: as composed; typed when the sweep is resolved (providers.routing)
    """As composed: read into the choice's own typed settings when the sweep is resolved (``providers.routing``)."""


class Assignment(Strict):
    """Which agent takes which role, and (optionally) who speaks first."""

    id: int = Field(ge=1)
    roles: dict[str, str] = Field(min_length=1)
    first_speaker: str | None = None


CellKey = tuple[str, str, str, int, str | None]
"""(game, condition, pairing, assignment id, first speaker): one cell of a grid, the same cell in every design of a
sweep folder that lays it out (``design.units`` places it once per block; the store tells a design's units by it)."""


class Design(Strict):
    """One game crossed with its conditions, pairings and assignments."""

    game: str
    conditions: list[str] = Field(min_length=1)
    pairings: list[str] = Field(min_length=1)
    assignments: list[Assignment] = Field(min_length=1)
    first_speakers: list[str | None] = Field([None], min_length=1)
    cells: dict[str, str] | None = None
    """Optional names of this design's cells, keyed by the cell label (``condition|pairing|a<id>``, plus
    ``|<first speaker>`` when the design varies it), e.g. seed 002's ``haiku_seller``; unnamed cells keep the label."""

    def speakers_of(self, a: Assignment) -> list[str | None]:
        """The first speakers an assignment is played with."""
        return [a.first_speaker] if a.first_speaker else self.first_speakers

    def speaker_varied(self, a: Assignment) -> bool:
        return len(self.first_speakers) > 1 and not a.first_speaker

    def cell(self, cond: str, pairing: str, a: Assignment, speaker: str | None) -> str:
        """The cell a game is tabled under: its name from ``cells``, else its label."""
        label = f"{cond}|{pairing}|a{a.id}" + (f"|{speaker}" if self.speaker_varied(a) and speaker else "")
        return (self.cells or {}).get(label, label)

    def cell_keys(self) -> list[CellKey]:
        """Every cell this design lays out, in design order (the order ``cell_labels`` names them)."""
        return [(self.game, c, p, a.id, s) for c in self.conditions for p in self.pairings for a in self.assignments
                for s in self.speakers_of(a)]

    def cell_labels(self) -> list[str]:
        """Every cell label this design lays out, in design order."""
        plain = self.model_copy(update={"cells": None})
        return [plain.cell(c, p, a, s) for c in self.conditions for p in self.pairings for a in self.assignments
                for s in self.speakers_of(a)]

    @model_validator(mode="after")
    def _check_cells(self) -> Design:
        if self.cells:
            unknown = sorted(set(self.cells) - set(self.cell_labels()))
            if unknown:
                raise ValueError(f"grid cells {unknown} are not cells of design {self.game!r}; "
                                 f"its cells are {self.cell_labels()}")
            names = list(self.cells.values())
            if len(set(names)) != len(names):
                raise ValueError(f"grid cell names must be distinct: {names}")
        return self


class GridConfig(Strict):
    name: str
    experiment: str
    prefix: str = "negotiation"
    seed: int = Field(0, ge=-INT64, le=INT64 - 1 - MAX_BLOCKS,
                      description="block b plays a seed derived from it (a folder written before hashing: seed + b, "
                                  "which must stay a 64-bit signed integer)")
    blocks: int = Field(1, ge=1, le=MAX_BLOCKS)
    seeds: list[Seed] | None = None
    designs: list[Design] = Field(min_length=1)

    @model_validator(mode="after")
    def _check(self) -> GridConfig:
        if self.seeds is not None and len(self.seeds) != self.blocks:
            raise ValueError(f"grid.seeds has {len(self.seeds)} seeds for {self.blocks} blocks")
        keys = self.cell_keys()
        if len(set(keys)) != len(keys):
            twice = next(k for k in keys if keys.count(k) > 1)
            raise ValueError(f"the grid's designs lay out one cell twice (game {twice[0]}, condition {twice[1]}, "
                             f"pairing {twice[2]}, assignment {twice[3]}, first speaker {twice[4]}): a block plays "
                             "each cell once (ours); replicate with grid.blocks")
        return self

    def cell_keys(self) -> list[CellKey]:
        """Every cell of every design, in grid order."""
        return [k for d in self.designs for k in d.cell_keys()]

    def block_seed(self, block: int, rule: BlockSeeds) -> int:
        """Common random numbers: every cell of a block plays the same seed, the listed one, else by ``rule``."""
        if self.seeds:
            return self.seeds[block - 1]
        return self.seed + block if rule == OFFSET else hashed_seed(self.seed, block)


class Condition(Strict):
    """A protocol variant: a name and overrides merged into the game config."""

    name: str
    description: str = ""
    game: dict[str, Any] = {}  # free-form: overrides of a game config, typed by its family's schema once merged


class BatchRun(Strict):
    """When the batcher sends what is waiting for one (provider, key, model): ``max_requests`` waiting, or
    ``max_wait_s`` after the first; each open batch is polled every ``poll_s``."""

    max_requests: int = Field(256, ge=1)
    max_wait_s: float = Field(1.0, ge=0.0, le=MAX_WAIT_S)
    poll_s: float = Field(5.0, gt=0.0, le=MAX_WAIT_S)


MAX_TURN_S = 86_400.0
"""The longest turn limit a human seat may have (ours: a day)."""


class Seats(Strict):
    """The seat server a sweep with human seats serves (``run.seats``); runtime knobs, none in a unit hash."""

    host: str = "127.0.0.1"
    port: int = Field(0, ge=0, le=65535)
    """0: a free port at the folder's first run, kept for its later runs (so a page left open finds it again)."""
    turn_limit_s: float | None = Field(None, ge=1.0, le=MAX_TURN_S)
    """Seconds a person has for a turn once the page showed it; None: no limit. A turn left unanswered past it
    ends the game unknown (ours), played again from that turn on resume."""


class RunConfig(Strict):
    """Runtime knobs: where, how fast, how much; none of them changes a game."""

    dir: str | None = None
    dry_run: bool = False
    allow_no_zone: bool = False
    """Play a game no deal can win for every side (``design.scenario``: refused before Ray otherwise; ours)."""
    workers: int | None = Field(None, ge=1)
    """GameRunner actors at most; None: as many as the sweep's size warrants, at most 2 (``execution.pool.runner_count``)."""
    max_in_flight: int = Field(2000, ge=1)
    games_per_task: int | None = Field(None, ge=1)
    """Units a GameRunner plays per actor task; None: 1 with models, 32 with strategy agents only."""
    max_cost_usd: float | None = Field(None, ge=0)
    journal_calls: bool | None = None
    batch_api: bool = False
    batch: BatchRun = BatchRun()
    progress: bool = True
    report: bool = True
    ray_timeout_s: float = Field(5.0, gt=0, le=600)
    """How long the Ray cluster to join may take to answer, at start and while the run goes on."""
    seats: Seats = Seats()
    on_drift: Literal["warn", "stop"] = "warn"
    """What a model served as another version than its first answer of the sweep does (``execution.drift``):
    ``warn`` flags it and goes on; ``stop`` stops the run as a budget stop does (no call starts), exit 1."""


class LocalFile(Strict):
    """A config file composed from ``./conf`` (``config.compose``): a user's own, or one set in a packaged file's
    place (``replaces``). Its digest says which version of it was read."""

    path: str
    sha256: str
    replaces: bool


class SweepConfig(Strict):
    run: RunConfig = RunConfig()
    provider: ProviderConfig = ProviderConfig()
    grid: GridConfig
    games: dict[str, dict[str, Any]]  # free-form: game configs as composed, typed by each family's schema (design.resolved)
    conditions: dict[str, Condition] = {}
    models: dict[str, ModelConfig]
    local_conf: list[LocalFile] = []
    """The ``./conf`` files the composition read (set by it, never by a config file or an override)."""

    @model_validator(mode="after")
    def _check(self) -> SweepConfig:
        for d in self.grid.designs:
            if d.game not in self.games:
                raise ValueError(f"grid design names game {d.game!r}, not in games: {sorted(self.games)}")
            for c in d.conditions:
                if c not in self.conditions:
                    raise ValueError(f"grid design names condition {c!r}, not in conditions: {sorted(self.conditions)}")
            for p in d.pairings:
                for letter in p:
                    if letter not in self.models:
                        raise ValueError(f"pairing {p!r}: no model for letter {letter!r} (models: {sorted(self.models)})")
            for a in d.assignments:
                agents = {chr(ord("A") + i) for i in range(len(d.pairings[0]))}
                bad = set(a.roles.values()) - agents
                if bad:
                    raise ValueError(f"assignment {a.id}: unknown agents {sorted(bad)}; pairings name {sorted(agents)}")
        return self

