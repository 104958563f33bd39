"""What determines the games of a sweep, by name: the fingerprint a resume compares.

A game's part is its config and a digest of every text a model can read under it, rendered
(``Game.texts()``: briefs, turn messages, rule sentences, observer instructions, repairs), each
under its own name. So changing one word of one text changes exactly that entry and a field-level
diff names it, while a refactor that keeps every word (a comment, a renamed helper, a moved module)
changes nothing: no source code is hashed. Provenance tags are not part of it: they change no word.
"""

from __future__ import annotations

from typing import Any

from bargain_ray.config import RUNTIME_KEYS, SweepConfig
from bargain_ray.core.hashing import digest
from bargain_ray.design.merge import game_config
from bargain_ray.games import load_game
from bargain_ray.providers.routing import effective_model
from bargain_ray.store.manifest import game_key


def text_digests(config: dict[str, Any]) -> dict[str, str]:
    """text name -> digest of the text, for one game config."""
    return {name: digest(t.text) for name, t in sorted(load_game(config).texts().items())}


def components(sweep: SweepConfig) -> dict[str, Any]:
    """What determines games, by name: compared on resume to name what changed."""
    out: dict[str, Any] = {}
    for d in sweep.grid.designs:
        for c in d.conditions:
            cfg = game_config(sweep, d.game, c)
            out[game_key(d.game, c)] = {"config": cfg, "texts": text_digests(cfg)}
    for letter in sorted(sweep.models):
        m = effective_model(sweep, letter).model_dump(mode="json", exclude=set(RUNTIME_KEYS))
        out[f"model {letter} ({m['name']})"] = m
    return out
