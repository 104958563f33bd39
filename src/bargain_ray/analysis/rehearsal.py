"""What a sweep's intervals mean when no language model played it: a rehearsal on the simulated provider, or
strategy agents only. Both answer a request the same way every time (the simulated provider unless its
``reply_noise`` is above 0, which each run of the folder records: ``store.sim_runs``), so a seed replays the same
game and the spread of an estimate comes from the seeds alone; where every seed draws the same game, its interval
has zero width, and the page says why. Under reply noise the note says which values were in force and what they do.
"""

from __future__ import annotations

from typing import Literal

import polars as pl
from pydantic import BaseModel

from bargain_ray.store.manifest import Manifest


class Rehearsal(BaseModel):
    """How a sweep's replies were produced, as the report and the card state it."""

    simulated: bool
    """The models were served by the project's simulated provider (``provider=sim``): costs are simulated."""
    replies: Literal["deterministic", "stochastic", "models"]
    """``deterministic``: the same request always got the same reply (the simulated provider with
    ``reply_noise`` 0, or strategy agents only); ``stochastic``: the simulated provider drew replies around each
    model's strategy (``reply_noise`` above 0) in some or all of the folder's runs; ``models``: language models
    answered."""
    reply_noise: list[float] = []
    """Each ``provider.settings.reply_noise`` the folder's runs on the simulated provider played with."""


def rehearsal(manifest: Manifest, providers: set[str], reply_noise: list[float]) -> Rehearsal:
    """How the replies of a sweep were produced: from its manifest's provider, the providers its calls name and
    the reply noise its runs on the simulated provider played with (``store.sim_runs``)."""
    if manifest.config.provider == "sim":
        drawn = any(n > 0 for n in reply_noise)
        return Rehearsal(simulated=True, replies="stochastic" if drawn else "deterministic", reply_noise=reply_noise)
    scripted = bool(providers) and providers <= {"strategy", "replay"}
    return Rehearsal(simulated=False, replies="deterministic" if scripted else "models")


def rehearsal_of(manifest: Manifest, calls: pl.LazyFrame, reply_noise: list[float]) -> Rehearsal:
    providers = {str(p) for p in calls.select(pl.col("provider").unique()).collect()["provider"] if p is not None}
    return rehearsal(manifest, providers, reply_noise)


def statement(r: Rehearsal) -> str | None:
    """The sentence a report and a card carry about a rehearsal, None for a sweep that language models played."""
    if r.simulated:
        return ("A rehearsal: every model was served by the project's simulated provider (provider=sim), and its "
                "costs are simulated: no money was spent. " + noise_effect(r.reply_noise))
    if r.replies == "deterministic":
        return ("No language model played: strategy agents answer each request deterministically, so a seed replays "
                "the same game, the intervals measure the spread between seeds only, and an interval of zero width "
                "means every seed gave the same value.")
    return None


def noise_effect(reply_noise: list[float]) -> str:
    """What the reply noise the folder's runs played with means for its replies and intervals."""
    if not any(reply_noise):
        return ("Its replies are deterministic (provider.settings.reply_noise=0: the same request always gets the "
                "same reply), so a seed replays the same game, the intervals measure the spread between seeds only, "
                "and an interval of zero width means every seed gave the same value (e.g. a game whose draws do not "
                "depend on the seed). Real models, or reply_noise above 0, give within-seed spread.")
    said = " and ".join(f"{n:g}" for n in reply_noise)
    drawn = (f"With provider.settings.reply_noise={said}, each reply was drawn around its model's strategy (the "
             "concession exponent multiplied by exp(noise x z), z a standard normal seeded by the provider's seed "
             "and the call, so the same seed gives the same sweep): replicate games differ, and the intervals "
             "include that spread, the simulated provider's, not a language model's.")
    if len(reply_noise) == 1:
        return drawn
    return (f"{drawn} The folder's runs played with different values ({said}), so its games mix replies drawn with "
            "each: compare them with care.")
