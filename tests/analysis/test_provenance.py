"""Every rule, setting, metric and text carries its source; every seed label quotes the seed's own words."""

from __future__ import annotations

import re
from fnmatch import fnmatch
from pathlib import Path
from typing import Annotated

import pytest
from pydantic import ValidationError

from bargain_ray.analysis import provenance
from bargain_ray.analysis.provenance import MissingProvenance, markdown, settings, sweep_items
from bargain_ray.config import choices, compose_dict
from bargain_ray.games import families, load_game
from bargain_ray.games.bargaining.config import BargainingConfig
from bargain_ray.games.kit.wording import rule_table
from bargain_ray.games.provenance import Provenance, Setting, ours
from bargain_ray.play.rescore import ReplayFile, replay_transcript
from bargain_ray.store import read_manifest

ROOT = Path(__file__).resolve().parents[2]
SEEDS = ROOT / "tests" / "data" / "seeds"
DATA = ROOT / "tests" / "data"
IDENTITY = {"unit_id", "turn", "role"}
"""Per-turn row columns that name the turn rather than measure it."""


def flat(text: str) -> str:
    return " ".join(text.split())


SEED_TEXT = {path.stem: flat(path.read_text(encoding="utf-8")) for path in SEEDS.glob("00*.txt")}


def every_config() -> list:
    """Each shipped game config as written and under each shipped condition that changes it."""
    games = [load_game(compose_dict(f"game/{g}")["game"]) for g in choices("game")]
    conditions = [compose_dict(f"condition/{c}")["condition"] for c in choices("condition")]
    variants = []
    for game in games:
        for condition in conditions:
            raw = compose_dict(f"game/{game.config.name}")["game"]
            try:
                variants.append(load_game(raw | condition.get("game", {})))
            except (ValidationError, ValueError):  # a condition of another family
                continue
    return games + variants


def test_seed_copies_are_the_five_seed_documents():
    assert sorted(SEED_TEXT) == ["000", "001", "002", "003", "004"]


def test_a_seed_label_needs_a_quote_and_ours_a_reason():
    with pytest.raises(ValidationError, match="quote the seed's own words"):
        Provenance(source="seed 002")
    with pytest.raises(ValidationError, match="give a one-line reason"):
        Provenance(source="ours")
    with pytest.raises(ValidationError, match="name seed 000"):
        Provenance(source="seed 005", quote="anything")
    with pytest.raises(ValidationError, match="a quote belongs to a seed"):
        Provenance(source="ours", reason="why", quote="words")
    assert Provenance(source="seed 003 + ours", quote="x", reason="y").seeds == ("003",)


def test_a_config_field_without_a_source_fails():
    class Knob(BargainingConfig):
        extra_knob: int = 3

    game = load_game(compose_dict("game/bargaining")["game"])
    game.config = Knob(**game.config.model_dump())
    with pytest.raises(MissingProvenance, match="Knob.extra_knob declares no provenance"):
        settings(game)

    class Labelled(BargainingConfig):
        extra_knob: Annotated[int, Setting(ours("a test knob"))] = 3

    game.config = Labelled(**game.config.model_dump(exclude={"extra_knob"}))
    assert settings(game)[-1].name == "extra_knob" and settings(game)[-1].provenance.reason == "a test knob"


def items() -> list:
    out = provenance.readme_items()
    for game in every_config():
        out += provenance.game_items(game, game.config.name)
    return out


def test_every_seed_label_quotes_words_of_that_seed():
    """A `seed NNN` label is true only if the seed's own text has its words (whitespace aside)."""
    checked = 0
    for item in items():
        p = item.provenance
        for piece in (p.quote or "").split(" … ") if p.seeds else []:
            assert any(flat(piece) in SEED_TEXT[n] for n in p.seeds), (
                f"{item.family} {item.kind} {item.name}: {piece!r} is not in seed {', '.join(p.seeds)}")
            checked += 1
    assert checked > 150


def test_every_rule_code_a_family_raises_is_declared():
    for game in every_config():
        declared = {d.name for d in type(game).rules()}
        codes = {code.split("/")[0] for code in rule_table(game.prompts.RULES)}
        assert codes <= declared, (game.config.name, sorted(codes - declared))


REPLAYS = ["seed001_replay.json", "bargaining_replay.json", "scorable_replay.json", "freetext_replay.json"]


@pytest.mark.parametrize("name", REPLAYS)
def test_every_metric_column_a_family_computes_is_declared(name):
    record = replay_transcript(ReplayFile.model_validate_json((DATA / name).read_text()))
    declared = type_of(record).metrics.METRICS
    columns = set(record.metrics) | {k for row in record.turn_metrics for k in row} - IDENTITY
    assert record.metrics and columns
    undeclared = [c for c in columns if not any(fnmatch(c, pattern) for pattern in declared)]
    assert not undeclared, undeclared


def type_of(record):
    return families()[record.unit.family].GAME


def test_the_readme_table_names_every_item_and_its_source():
    table = provenance.readme_table()
    assert table.startswith("| where | kind | source | items |")
    for fam in families():
        assert f"| {fam} | rule | " in table
    assert "| bargaining | setting | ours | name, item, price_min, price_max, decimals, max_message_chars" in table
    assert "| freetext | rule | seed 000 + ours | observer_failure |" in table
    assert re.search(r"\| scorable \| rule \| ours \| [^|]*opener_past_walk, first_opener", table)


def test_a_sweep_collects_its_settings_with_values_and_renders_them(finished_sweep, tmp_path):
    folder = finished_sweep(["+grid=bargaining_demo", "run.progress=false", "run.report=false",
                             "games.bargaining.max_rounds=8"], tmp_path / "s")
    collected = sweep_items(read_manifest(folder))
    rounds = [i for i in collected if i.kind == "setting" and i.name == "max_rounds"]
    assert {(i.condition, i.value, i.default) for i in rounds} == {("default", "8", "20"),
                                                                   ("explicit_objective", "8", "20")}
    off = {(i.name, i.condition) for i in provenance.settings_off_default(collected)}
    assert off == {("max_rounds", "default"), ("max_rounds", "explicit_objective"),
                   ("prompt_variant", "explicit_objective")}
    variant = [i for i in collected if i.kind == "setting" and i.name == "prompt_variant"]
    assert {i.value for i in variant} == {'"default"', '"explicit_objective"'}
    objective = next(i for i in collected if i.name == "sentence:objective")
    assert objective.provenance.source == "seed 002" and objective.condition == "explicit_objective"
    md = markdown(collected, values=True)
    assert "| bargaining / default | setting | max_rounds |  | 8 (default 20) | seed 002 |" in md
    page = provenance.html(collected, values=True)
    assert page.count('<tr class="ours">') == sum(1 for line in md.splitlines()[2:] if "| **ours** |" in line
                                                   or "+ **ours** |" in line)
    assert "&lt;unit id&gt;-k&lt;nn&gt;" in page  # text is escaped


def test_the_readme_table_command_prints_the_table_and_nothing_else():
    """``python -m bargain_ray.analysis.provenance`` as the README gives it: the table on stdout, stderr empty (no
    runpy warning from a package that imported the module before it ran as a script)."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "bargain_ray.analysis.provenance"], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert done.stdout == provenance.readme_table() + "\n"
