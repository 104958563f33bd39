"""A strategy agent's parameters (``models.<letter>.strategy``) are typed by the strategy of each family it plays
(``Params`` in ``games/<family>/strategy.py``): a mistyped key or a bad value is one line, before Ray, never a
default silently used; a key one of its families reads is kept."""

from __future__ import annotations

import pytest

from bargain_ray.__main__ import main
from bargain_ray.config import compose_dict
from bargain_ray.config.errors import ConfigError
from bargain_ray.design.resolved import compose_sweep
from bargain_ray.execution import sweep
from bargain_ray.games import load_game, strategy_reply
from bargain_ray.games.bargaining.config import BargainingConfig
from bargain_ray.games.base import Game
from bargain_ray.games.kit.concession import EXPONENTS, Concession


def problems(*overrides: str) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        compose_sweep(overrides)
    return caught.value.problems


@pytest.mark.parametrize(("overrides", "says"), [
    # boulware.yaml sets only kind: the nearest key is one the family's strategy reads, not one the file has
    (["+grid=demo", "models.B.strategy.margn=2"],
     "unknown key models.B.strategy.margn; did you mean models.B.strategy.margin?"),
    (["+grid=bargaining_demo", "+models.L.strategy.blufff=5"],
     "unknown key models.L.strategy.blufff; did you mean models.L.strategy.bluff?"),
    (["+grid=bargaining_demo", "models.B.strategy.claim=inflatd"],
     "models.B.strategy.claim=inflatd: should be 'truthful', 'inflated' or 'silent'"),
    (["+grid=bargaining_demo", "models.B.strategy.bluff=-5"], "models.B.strategy.bluff=-5: must be >= 0"),
    (["+grid=demo", "models.B.strategy.kind=bolware"],
     "models.B.strategy.kind=bolware: should be 'boulware', 'conceder' or 'linear'"),
    # L plays the bargaining, multi-issue and scorable families: the line is said once, not once per family
    (["+grid=mixed_demo", "models.L.strategy.exponent=0"], "models.L.strategy.exponent=0: must be > 0"),
    (["+grid=freetext_demo", "models.I.strategy.style=sly"],
     "models.I.strategy.style=sly: should be 'integrative', 'distributive' or 'hardline'"),
    (["+grid=freetext_demo", "models.I.strategy.concede_after=-1"], "models.I.strategy.concede_after=-1: must be >= 0"),
    # I plays the free-text family only, whose talker has no claim
    (["+grid=mixed_demo", "+models.I.strategy.claim=silent"],
     "unknown key models.I.strategy.claim; models.I.strategy has concede_after, draw, greedy, kind, misread, style"),
    (["+grid=c3_smoke", "+models.O.strategy.kind=linear"],
     "models.O.strategy: only a strategy agent (provider: strategy) reads it; remove it"),
])
def test_a_strategy_parameter_no_family_reads_as_given_is_one_line(overrides: list[str], says: str) -> None:
    assert problems(*overrides) == [says]


def test_the_command_refuses_a_mistyped_strategy_key_before_the_sweep_starts(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    def reached(*_: object) -> int:
        raise AssertionError("the sweep started")

    monkeypatch.setattr(sweep, "run_sweep", reached)
    assert main(["+grid=bargaining_demo", "+models.C.strategy.nois=3"]) == 1
    assert capsys.readouterr().err.splitlines() == [
        "error: unknown key models.C.strategy.nois; did you mean models.C.strategy.noise?"]


def test_a_key_one_of_its_families_reads_is_kept_and_typed() -> None:
    resolved = compose_sweep(["+grid=mixed_demo", "models.B.strategy.claim=silent", "models.L.strategy.bluff=5"])
    assert resolved.models["B"].strategy == {"kind": "boulware", "claim": "silent"}  # as written (the fingerprint's)
    assert resolved.models["L"].strategy == {"kind": "linear", "bluff": 5}


def test_a_tactic_reads_its_exponent_from_kind_unless_set() -> None:
    assert Concession.model_validate({"kind": "boulware"}).concession_exponent() == EXPONENTS["boulware"] == 0.2
    assert Concession.model_validate({"kind": "boulware", "exponent": 3}).concession_exponent() == 3.0


def replies(game: Game, params: dict[str, object], turns: int = 6) -> list[str]:
    """What the strategy answering every request with ``params`` (as the simulated provider does) says each turn."""
    state, said = game.start(3, None), []
    while len(said) < turns and (role := game.to_move(state)) is not None:
        prompt = game.prompt(state, role)
        said.append(strategy_reply(prompt.system, [m.model_dump() for m in prompt.messages], params))
        state = game.apply(state, role, game.parse(state, role, said[-1]))
    return said


def test_the_simulated_provider_s_tactic_reaches_each_family_as_far_as_it_reads_it() -> None:
    """The sim answers every family with a concession tactic (``kind`` and, with reply noise, ``exponent``): the
    free-text talker has no exponent and picks its style by kind; the bargaining strategy concedes by the exponent."""
    talk = load_game(compose_dict("game/orange")["game"])
    assert replies(talk, {"kind": "boulware", "exponent": 0.9}) == replies(talk, {"style": "hardline"})
    assert replies(talk, {"kind": "boulware"}) != replies(talk, {"kind": "conceder"})
    bargain = load_game(BargainingConfig(name="b", max_rounds=6).model_dump())
    assert replies(bargain, {"kind": "linear", "exponent": 0.2}) == replies(bargain, {"kind": "boulware"})
    assert replies(bargain, {"kind": "linear", "exponent": 0.2}) != replies(bargain, {"kind": "linear"})
