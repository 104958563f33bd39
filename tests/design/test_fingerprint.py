"""The resume fingerprint is taken over what a model reads, rendered, never over Python source.

Changing one word of any text a model reads changes that text's entry, named; a refactor that keeps
every word (a comment, a renamed helper, a moved module) changes nothing. Fast: no Ray, no sweep.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import json
import sys
from decimal import Decimal

import pytest

from bargain_ray.config import compose_dict
from bargain_ray.core.hashing import digest
from bargain_ray.design import ResolvedSweep, load_config, resolve
from bargain_ray.games import load_game
from bargain_ray.games.bargaining import prompts as bargaining_prompts
from bargain_ray.games.freetext import prompts as freetext_prompts
from bargain_ray.games.kit import wording
from bargain_ray.games.multi_issue import prompts as multi_issue_prompts
from bargain_ray.games.scorable import prompts as scorable_prompts

TICKETS = "game tickets under condition C3"
ORANGE = "game orange under condition FT"
BARGAINING = "game bargaining under condition default"
SCORABLE = "game scorable6 under condition public"


def mixed() -> ResolvedSweep:
    return load_config("mixed_demo")


def components(sweep: ResolvedSweep) -> dict:
    """The fingerprint of ``sweep``'s config resolved again (with the texts as the game modules render them now)."""
    return resolve(sweep.config).components


def changed(before: dict, after: dict) -> dict[str, list[str]]:
    """component -> the names of its fields (config, then each text) that differ: a field-level diff."""
    out: dict[str, list[str]] = {}
    for name in sorted(set(before) | set(after)):
        a, b = before.get(name, {}), after.get(name, {})
        if a == b:
            continue
        fields = ["config"] if a.get("config") != b.get("config") else []
        texts_a, texts_b = a.get("texts", {}), b.get("texts", {})
        fields += [t for t in sorted(set(texts_a) | set(texts_b)) if texts_a.get(t) != texts_b.get(t)]
        out[name] = fields
    return out


@pytest.fixture(scope="module")
def sweep() -> ResolvedSweep:
    return mixed()


@pytest.fixture(scope="module")
def before(sweep) -> dict:
    return components(sweep)


def test_each_game_component_is_its_config_and_a_digest_per_rendered_text(sweep, before):
    for name in (TICKETS, ORANGE, BARGAINING, SCORABLE):
        part = before[name]
        assert set(part) == {"config", "texts"}
        json.dumps(part)  # plain JSON, so a manifest can compare it field by field
        game = load_game(part["config"])
        rendered = game.texts()
        assert part["texts"] == {k: digest(t.text) for k, t in rendered.items()}
        assert any(k.startswith("brief:") for k in rendered) and any(k.startswith("rule:") for k in rendered)
        assert any(k.startswith("repair") for k in rendered)
    assert "observer:instructions" in before[ORANGE]["texts"]
    assert "turn:final_reply" in before[TICKETS]["texts"]


def test_no_source_code_is_hashed(sweep, before):
    """Neither a family's module source nor its digest appears anywhere in the fingerprint."""
    flat = json.dumps(before)
    for module in (bargaining_prompts, freetext_prompts, multi_issue_prompts, scorable_prompts):
        source = inspect.getsource(module)
        assert digest(source) not in flat and source[:200] not in flat


BRIEFS = [f"brief:{p}" for p in ("Avery", "Blake", "Casey", "Devon", "Ember", "Flynn")]


@pytest.mark.parametrize(
    ("module", "name", "edit", "expected"),
    [
        # a rule sentence of one family
        (multi_issue_prompts, "RULES",
         lambda t: t | {"term_out_of_range": t["term_out_of_range"].replace("must be", "has to be")},
         {TICKETS: ["rule:term_out_of_range"]}),
        # a rule sentence the kit renders for every JSON family that does not reword it
        (wording, "RULES", lambda t: t | {"missing_key": "The JSON object needs the key {key!r}."},
         {c: ["rule:missing_key"] for c in (BARGAINING, ORANGE, SCORABLE, TICKETS)}),
        # the shared repair line, in every family that says it
        (wording, "NOTHING_RECORDED", lambda t: t.replace("Nothing", "Nothing at all"),
         {c: ["repair"] for c in (BARGAINING, SCORABLE, TICKETS)}),
        # the observer's instructions
        (freetext_prompts, "_OBSERVER", lambda t: t.replace("silently observe", "quietly observe"),
         {ORANGE: ["observer:instructions"]}),
        # a sentence of the briefs
        (scorable_prompts, "PUBLIC_INFORMATION", lambda t: t.replace("common knowledge", "public"),
         {SCORABLE: [*BRIEFS, "sentence:information"]}),
        # the opening line a party reads
        (freetext_prompts, "OPENING", lambda t: t.replace("begins now", "starts now"), {ORANGE: ["turn:opening"]}),
        # a sentence only another prompt variant reads: nothing this sweep plays changes
        (bargaining_prompts, "OBJECTIVE", lambda t: t.replace("maximize", "maximise"), {}),
    ],
    ids=["family-rule", "kit-rule", "repair", "observer", "brief", "opening", "unused-variant"],
)
def test_one_changed_word_changes_the_components_that_read_it_naming_the_text(
        monkeypatch, sweep, before, module, name, edit, expected):
    monkeypatch.setattr(module, name, edit(getattr(module, name)))
    assert changed(before, components(sweep)) == expected


def test_a_refactor_that_keeps_every_word_changes_nothing(monkeypatch, sweep, before):
    """Re-imported prompt modules (as after a moved module or an edited comment) and helpers rewritten
    with other code but the same words leave every component equal."""
    for name in [m for m in sys.modules if m.startswith("bargain_ray.games.") and m.endswith(".prompts")]:
        importlib.reload(sys.modules[name])
    monkeypatch.setattr(multi_issue_prompts, "fixed", lambda config, x: format(Decimal(str(x)), f".{config.decimals}f"))
    monkeypatch.setattr(scorable_prompts, "num", lambda x: str(Decimal(str(x)).normalize().__format__("f")))
    assert changed(before, components(sweep)) == {}


def test_a_module_with_other_source_but_the_same_words_changes_nothing(monkeypatch, sweep, before, tmp_path):
    """The multi-issue prompts rebuilt from edited source (a comment added, a helper renamed) and
    loaded as another module: its source differs, its words do not, so nothing changes."""
    source = inspect.getsource(multi_issue_prompts).replace("_words(", "_count_word(")
    source = "# a comment that changes no word a model reads\n" + source
    assert source != inspect.getsource(multi_issue_prompts)
    path = tmp_path / "moved_prompts.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("moved_prompts", path)
    moved = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(moved)
    monkeypatch.setattr(load_game(before[TICKETS]["config"]).__class__, "prompts", moved)
    assert load_game(before[TICKETS]["config"]).prompts is moved
    assert changed(before, components(sweep)) == {}


def test_a_config_change_is_named_as_config(sweep, before):
    other = load_config("mixed_demo", ["games.tickets.max_turns=10"])
    diff = changed(before, other.components)
    assert list(diff) == [TICKETS] and diff[TICKETS][0] == "config"


def test_every_text_carries_its_provenance(sweep):
    orange = sweep.game("orange", "FT").texts()
    assert orange["brief:party_a"].source == "seed 004" and orange["observer:instructions"].source == "seed 004"
    assert orange["repair:party"].source == wording.OURS and orange["turn:opening"].source == wording.OURS
    battery = load_game(compose_dict("game/battery")["game"]).texts()
    assert {t.source for k, t in battery.items() if k.startswith(("brief:", "observer:"))} == {wording.OURS}
    tickets = sweep.game("tickets", "C3").texts()
    assert tickets["brief:buyer"].source == "seed 000" and tickets["turn:opening"].source == "seed 000"
    assert tickets["turn:final_reply"].source == wording.OURS and tickets["repair"].source == wording.OURS
    public = sweep.game("scorable6", "public").texts()
    assert public["brief:Avery"].source == "seed 003" and public["turn:opening"].source == wording.OURS
    private = load_game(compose_dict("game/scorable6")["game"] | {"public_score_sheets": False}).texts()
    assert private["brief:Avery"].source == "seed 003 + ours" and private["sentence:information"].source == "ours"
    bargaining = load_game(compose_dict("game/bargaining")["game"] | {"prompt_variant": "explicit_objective"}).texts()
    assert bargaining["brief:seller"].source == wording.OURS and bargaining["sentence:objective"].source == "seed 002"


def test_rule_texts_show_every_sentence_with_placeholders():
    tickets = load_game(compose_dict("game/tickets")["game"]).texts()
    assert tickets["rule:term_out_of_range"].text == "<term> is <value>: it must be from <low:.<decimals>f> to <high:.<decimals>f>."
    assert tickets["rule:unknown_key"].text == "Unknown key <key!r>: the keys are <keys:list>."
    assert tickets["repair"].text == ("Your reply was not accepted: <rule sentence> Nothing was recorded for this turn. "
                                      "Reply again for turn 1 with exactly one JSON object and nothing else.")
