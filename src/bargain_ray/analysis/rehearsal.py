"""What a sweep's intervals mean when no language model played it: a rehearsal on the simulated provider, or
strategy agents only. Both answer a request the same way every time (the simulated provider unless a setting
makes its replies stochastic), so a seed replays the same game and the spread of an estimate comes from the
seeds alone; where every seed draws the same game, its interval has zero width, and the page says why.
"""

from __future__ import annotations

from typing import Any, Literal

import polars as pl
from pydantic import BaseModel

from bargain_ray.store.manifest import Manifest

STOCHASTIC_KEYS = ("stochastic", "temperature", "noise")
"""Provider settings that make the simulated provider's replies vary (any of them set and not false or zero)."""


class Rehearsal(BaseModel):
    """How a sweep's replies were produced, as the report and the card state it."""

    simulated: bool
    """The models were served by the project's simulated provider (``provider=sim``): costs are simulated."""
    replies: Literal["deterministic", "stochastic", "models"]
    """``deterministic``: the same request always got the same reply (the simulated provider in its default mode,
    or strategy agents only); ``stochastic``: the simulated provider drew replies from a seeded stream;
    ``models``: language models answered."""


def _settings(manifest: Manifest) -> dict[str, Any]:
    """The provider settings the manifest recorded, if it records any (today it does not: they are runtime knobs)."""
    recorded = manifest.model_dump(mode="json")
    return recorded.get("provider_settings") or recorded["config"].get("provider_settings") or {}


def sim_is_stochastic(manifest: Manifest) -> bool:
    """Whether the simulated provider's replies varied: only when a recorded setting says so (our default: the
    simulated provider answers each request deterministically, as it does unless its stochastic mode is on)."""
    settings = _settings(manifest)
    found = [settings.get(k) for k in STOCHASTIC_KEYS]
    return any(v not in (None, False, 0, {}, "") for v in found)


def rehearsal(manifest: Manifest, providers: set[str]) -> Rehearsal:
    """How the replies of a sweep were produced: from its manifest's provider and the providers its calls name."""
    simulated = manifest.config.provider == "sim"
    if simulated:
        return Rehearsal(simulated=True, replies="stochastic" if sim_is_stochastic(manifest) else "deterministic")
    scripted = bool(providers) and providers <= {"strategy", "replay"}
    return Rehearsal(simulated=False, replies="deterministic" if scripted else "models")


def rehearsal_of(manifest: Manifest, calls: pl.LazyFrame) -> Rehearsal:
    providers = {str(p) for p in calls.select(pl.col("provider").unique()).collect()["provider"] if p is not None}
    return rehearsal(manifest, providers)


def statement(r: Rehearsal) -> str | None:
    """The sentence a report and a card carry about a rehearsal, None for a sweep that language models played."""
    if r.simulated and r.replies == "deterministic":
        return ("A rehearsal: every model was served by the project's simulated provider (provider=sim), whose "
                "replies are deterministic (the same request always gets the same reply), and its costs are "
                "simulated: no money was spent. A seed therefore replays the same game, so the intervals measure "
                "the spread between seeds only, and an interval of zero width means every seed gave the same value "
                "(e.g. a game whose draws do not depend on the seed). Real models, or the simulated provider's "
                "stochastic mode, give within-seed spread.")
    if r.simulated:
        return ("A rehearsal: every model was served by the project's simulated provider (provider=sim) in its "
                "stochastic mode (replies drawn from a seeded stream, so the same seed gives the same sweep), and its "
                "costs are simulated: no money was spent.")
    if r.replies == "deterministic":
        return ("No language model played: strategy agents answer each request deterministically, so a seed replays "
                "the same game, the intervals measure the spread between seeds only, and an interval of zero width "
                "means every seed gave the same value.")
    return None
