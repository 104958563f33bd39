"""What determines the games of a sweep, by name: the fingerprint a resume compares.

A game's part is its config and a digest of every text a model can read under it, rendered
(``Game.texts()``: briefs, turn messages, rule sentences, observer instructions, repairs), each
under its own name. So changing one word of one text changes exactly that entry and a field-level
diff names it, while a refactor that keeps every word (a comment, a renamed helper, a moved module)
changes nothing: no source code is hashed. Provenance tags are not part of it: they change no word.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bargain_ray.config import RUNTIME_KEYS, ModelConfig
from bargain_ray.core.hashing import digest
from bargain_ray.games import Game


def game_key(game: str, condition: str) -> str:
    """The name of a game config's part in the fingerprint (and in ``manifest.json``'s ``components``)."""
    return f"game {game} under condition {condition}"


def game_part(components: Mapping[str, Any], game: str, condition: str) -> dict[str, Any] | None:  # free-form: fingerprint JSON, compared key by key
    """The fingerprint part of ``game`` under ``condition`` (``config``: the game config it was played
    under, as written; ``texts``: the digest of each text a model reads), None when there is no such game."""
    return components.get(game_key(game, condition))


def text_digests(game: Game) -> dict[str, str]:
    """text name -> digest of the text, for one game."""
    return {name: digest(t.text) for name, t in sorted(game.texts().items())}


def schema_digests(game: Game) -> dict[str, str]:
    """state name -> digest of the legal-move schema a request carries there, for one game."""
    return {name: digest(schema) for name, schema in sorted(game.schemas().items())}


def model_part(letter: str, model: ModelConfig) -> tuple[str, dict[str, Any]]:  # free-form: fingerprint JSON, compared key by key
    """(name, part) of one model as this run calls it: every field but the runtime knobs."""
    return f"model {letter} ({model.name})", model.model_dump(mode="json", exclude=set(RUNTIME_KEYS))


def components(written: Mapping[str, dict[str, Any]], games: Mapping[str, Game],  # free-form: fingerprint JSON, compared key by key
               models: Mapping[str, ModelConfig]) -> dict[str, Any]:  # free-form: fingerprint JSON, compared key by key
    """What determines games, by name: compared on resume to name what changed.

    ``written`` and ``games`` are keyed by ``game_key``: each game config as the sweep writes it (its YAML
    merged with the condition's overrides, so a default the YAML leaves out is not part of it) and the game
    bound to it; ``models`` are keyed by letter, each as this run calls it. When a model's output is constrained
    (``structured_output``), each game's legal-move schemas are part of it too (``schemas``); a sweep without
    one reads none, and its fingerprint has no such part.
    """
    constrained = any(m.structured_output for m in models.values())
    out: dict[str, Any] = {}  # free-form: fingerprint JSON, compared key by key
    for key in written:
        schemas = schema_digests(games[key]) if constrained else {}
        out[key] = {"config": written[key], "texts": text_digests(games[key])} | ({"schemas": schemas} if schemas else {})
    return out | dict(model_part(letter, models[letter]) for letter in sorted(models))

