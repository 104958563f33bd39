"""The game contract: runtime-checkable protocols checked once as a family loads, a typed state base, figures
read from the typed record (the same whether the record is fresh or read back from the journal)."""

from __future__ import annotations

import ast
import json
import types
from pathlib import Path

import pytest

from bargain_ray.config import compose_dict
from bargain_ray.core.records import GameRecord
from bargain_ray.games import families, family, load_game
from bargain_ray.games.bargaining import BargainingGame
from bargain_ray.games.base import CONTRACT, Game, GameState, IncompleteFamily
from bargain_ray.play.rescore import ReplayFile, replay_transcript

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
REPLAYS = ["seed001_replay.json", "bargaining_replay.json", "scorable_replay.json", "freetext_replay.json"]


@pytest.mark.parametrize("name", sorted(families()))
def test_every_family_satisfies_each_protocol_and_its_state_has_the_base(name):
    cls = family(name).GAME
    assert issubclass(cls, Game) and cls.family == name
    for kind, protocol in CONTRACT.items():
        assert isinstance(getattr(cls, kind), protocol), (name, kind)
    state = cls.engine.State
    assert issubclass(state, GameState) and {"ended", "failed_role"} <= set(state.model_fields)


def test_a_family_missing_a_function_is_refused_as_it_loads_naming_it():
    engine = types.ModuleType("engine")
    for member in ("PROTOCOL", "start", "to_move", "parse", "apply", "turn_fields"):  # no exhausted
        setattr(engine, member, getattr(BargainingGame.engine, member))
    with pytest.raises(IncompleteFamily, match=r"game family Broken .*missing engine\.exhausted$"):
        type("Broken", (BargainingGame,), {"engine": engine})
    metrics = types.ModuleType("metrics")
    metrics.outcome = BargainingGame.metrics.outcome
    with pytest.raises(IncompleteFamily, match=r"missing metrics\.METRICS, metrics\.per_game, metrics\.per_turn$"):
        type("Broken", (BargainingGame,), {"metrics": metrics})


@pytest.mark.parametrize("name", REPLAYS)
def test_figures_of_a_fresh_record_equal_those_of_its_journal_line(name):
    """Figures are computed from the typed record as the game ends; read back from its journal line, the same
    record gives the same figures, so a sweep re-scored from its journal keeps every figure."""
    record = replay_transcript(ReplayFile.model_validate_json((DATA / name).read_text()))
    assert record.metrics, name
    spec = json.loads((DATA / name).read_text())
    game = load_game(compose_dict(f"game/{spec['game']}", spec.get("overrides", []))["game"])
    journaled = GameRecord.model_validate_json(record.model_dump_json())
    assert game.game_metrics(journaled) == record.metrics
    assert game.turn_metrics(journaled) == record.turn_metrics


def test_analysis_and_the_loop_look_no_family_hook_up_by_name():
    """No getattr/hasattr in the layers that read families: what they read is declared on the Game class. A
    package's lazy ``__getattr__`` (its public names loaded on first use) looks up its own modules, no family's."""
    src = ROOT / "src" / "bargain_ray"
    for layer in ("analysis", "play", "agents", "execution", "design"):
        for path in (src / layer).rglob("*.py"):
            tree = ast.parse(path.read_text())
            lazy = {id(n) for f in ast.walk(tree) if isinstance(f, ast.FunctionDef) and f.name == "__getattr__"
                    for n in ast.walk(f)}
            calls = [n.func.id for n in ast.walk(tree) if id(n) not in lazy
                     if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in ("getattr", "hasattr")]
            assert not calls, f"{path.relative_to(ROOT)} looks something up by name: {calls}"
