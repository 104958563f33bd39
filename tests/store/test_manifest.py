"""The manifest: what names and determines units, compared field by field on resume (no Ray)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from folders import play_demo

from bargain_ray.__main__ import main
from bargain_ray.config import conf_dir, local_conf_note
from bargain_ray.design import game_part, load_config
from bargain_ray.execution.plan import describe, plan
from bargain_ray.store import ChangedConfig, open_manifest, read_manifest
from bargain_ray.store.manifest import ABSENT, Manifest, differences, refusal


def start(path, grid="c3_full", *overrides, created="20261027"):
    """A sweep folder whose manifest the config of ``grid`` with ``overrides`` gave."""
    return open_manifest(path, describe(load_config(grid, overrides), created))


def resume(path, grid="c3_full", *overrides):
    return open_manifest(path, describe(load_config(grid, overrides), "20991231"))


def refused(path, grid, *overrides) -> str:
    with pytest.raises(ChangedConfig) as exc:
        resume(path, grid, *overrides)
    return str(exc.value)


def test_the_manifest_records_everything_that_names_or_determines_units(tmp_path):
    start(tmp_path, "c3_full", "provider=sim")
    manifest = read_manifest(tmp_path)  # readers get the model, the file holds its JSON
    assert isinstance(manifest, Manifest) and manifest.config.grid.seed == 20261027
    data = json.loads((tmp_path / "manifest.json").read_text())
    assert data["grid"] == "c3_full" and data["created"] == "20261027" and "git_commit" in data
    grid = data["config"]["grid"]
    assert (grid["experiment"], grid["prefix"], grid["seed"], grid["blocks"], grid["seeds"]) == (
        "c3rep40", "negotiation", 20261027, 40, None)
    design = grid["designs"][0]
    assert design["pairings"] == ["OO", "OH", "HO", "HH"] and design["assignments"][2]["first_speaker"] == "seller"
    assert design["conditions"] == ["C3"] and "first_speakers" in design
    assert data["config"]["provider"] == "sim"
    assert data["config"]["games"]["tickets"]["max_turns"] == 12
    assert data["config"]["models"]["O"]["params"]["output_config"] == {"effort": "low"}
    assert data["config"]["models"]["O"]["provider"] == "sim"  # as this run calls it
    assert "limits" not in data["config"]["models"]["O"] and "retry" not in data["config"]["models"]["O"]
    assert "description" not in data["config"]["conditions"]["C3"]
    assert any(k.startswith("game tickets") for k in data["components"])
    assert Manifest.model_validate(data).config.grid.seed == 20261027  # a pydantic model, read back whole


def test_a_seed_change_is_refused_naming_the_field_and_both_values(tmp_path):
    start(tmp_path)
    message = refused(tmp_path, "c3_full", "grid.seed=8")
    assert "grid.seed 20261027 → 8" in message and "run.dir=" in message and "\n" not in message


def test_game_and_model_changes_are_refused_naming_the_field(tmp_path):
    start(tmp_path)
    assert "games.tickets.max_turns 12 → 6" in refused(tmp_path, "c3_full", "games.tickets.max_turns=6")
    message = refused(tmp_path, "c3_full", "models.O.params.output_config.effort=high")
    assert "models.O.params.output_config.effort low → high" in message
    assert "conditions.C3.game.max_turns (absent) → 4" in refused(tmp_path, "c3_full", "+conditions.C3.game.max_turns=4")
    start(tmp_path / "demo", "demo")  # seed 7: blocks 1-3 play seeds 8, 9, 10
    resume(tmp_path / "demo", "demo", "grid.blocks=4", "grid.seeds=[8,9,10,99]")  # the same seeds, one block more
    assert "grid.seeds.1 9 → 19" in refused(tmp_path / "demo", "demo", "grid.seeds=[8,19,10]")  # a block played


def test_a_design_may_grow_or_narrow_but_not_change_what_it_recorded(tmp_path):
    """Growth is not a change (issue 21.1): blocks, pairings, names and new models or games may come and go;
    what a recorded design determined may not change."""
    start(tmp_path)
    for grown in (["grid.blocks=3"], ["grid.blocks=60"], ["grid.experiment=other", "grid.name=x"],
                  ["grid.designs.0.pairings=[OO]"], ["grid.designs.0.pairings=[OO,OH,HO,HH,HX]", "+models.X=${models.H}"],
                  ["~models.H", "grid.designs.0.pairings=[OO]"]):
        resume(tmp_path, "c3_full", *grown)
    assert "models.H.max_tokens 4096 → 5" in refused(tmp_path, "c3_full", "grid.designs.0.pairings=[OO]",
                                                     "models.H.max_tokens=5")  # not played now, played before


def test_a_rehearsal_never_resumes_as_a_real_run(tmp_path):
    start(tmp_path)
    assert "provider default → sim" in refused(tmp_path, "c3_full", "provider=sim")


def test_runtime_knobs_never_block_a_resume(tmp_path):
    recorded = start(tmp_path, "c3_full", "provider=sim")
    again = resume(tmp_path, "c3_full", "provider=sim", "run.workers=7", "run.max_in_flight=3", "run.max_cost_usd=1",
                   "models.O.limits.max_in_flight=2", "models.H.limits.requests_per_minute=10",
                   "models.O.retry.max_attempts=2", "provider.settings.latency.median_s=1.0",
                   "provider.settings.faults.error_5xx=0.5")
    assert again.model_dump_json() == recorded.model_dump_json() and again.created == "20261027"  # never today


def test_many_changes_name_the_first_few_and_the_count(tmp_path):
    start(tmp_path)
    message = refused(tmp_path, "c3_full", "grid.seed=8", "grid.blocks=2", "games.tickets.max_turns=6",
                      "models.O.max_tokens=5", "models.H.max_tokens=6")
    assert "grid.seed 20261027 → 8; games.tickets.max_turns 12 → 6; models.H.max_tokens 4096 → 6" in message
    assert "(and 1 more: 4 fields differ)" in message  # grid.blocks is growth, not a change


def test_the_fingerprint_is_compared_when_the_config_fields_agree(tmp_path):
    """What no config field shows (the text a model reads) still refuses, through the components."""
    recorded = start(tmp_path)
    part = next(k for k in recorded.components if k.startswith("game "))
    tampered = json.loads((tmp_path / "manifest.json").read_text())
    tampered["components"][part]["prompts"] = "0000000000000000"
    (tmp_path / "manifest.json").write_text(json.dumps(tampered))
    message = refused(tmp_path, "c3_full")
    assert f"components.{part}.prompts 0000000000000000 → " in message


def test_a_journal_without_its_manifest_is_refused_not_recreated(tmp_path):
    (tmp_path / "journal.jsonl").write_text("")
    message = refused(tmp_path, "c3_full")
    assert "journal.jsonl" in message and "manifest.json" in message and "run.dir=" in message
    assert not (tmp_path / "manifest.json").exists()


def test_a_manifest_that_does_not_record_the_design_is_refused(tmp_path):
    """A folder from before the check (grid, date and components only) cannot be compared field by field."""
    (tmp_path / "manifest.json").write_text(json.dumps({"grid": "c3_full", "created": "20261027", "components": {}}))
    message = refused(tmp_path, "c3_full")
    assert "does not record what determines its games" in message and "run.dir=" in message
    (tmp_path / "manifest.json").write_text('{"grid": "c3_')
    assert "run.dir=" in refused(tmp_path, "c3_full")


def test_differences_walk_nested_json_by_path():
    old = {"a": {"b": 1, "c": [1, 2], "d": None}, "e": [1], "f": 1}
    new = {"a": {"b": 2, "c": [1, 3]}, "e": [1, 2], "f": 1.0, "g": "x"}
    assert differences(old, new) == [
        ("a.b", 1, 2), ("a.c.1", 2, 3), ("a.d", None, ABSENT), ("e", [1], [1, 2]), ("f", 1, 1.0), ("g", ABSENT, "x"),
    ]
    assert differences(old, json.loads(json.dumps(old))) == []


def test_a_refusal_is_one_line_and_cuts_long_values(tmp_path):
    message = refusal(tmp_path, [("games.x.situation", "a" * 500, "b\nc")])
    assert len(message) < 400 and "…" in message


def test_readers_get_the_games_and_key_variables_from_the_typed_manifest(tmp_path):
    start(tmp_path, "c3_full", "++models.O.api_key_env=MY_TEAM_TOKEN")
    manifest = read_manifest(tmp_path)
    assert manifest.game_conditions() == [("tickets", "C3")]
    assert game_part(manifest.components, "tickets", "C3")["config"]["max_turns"] == 12
    assert game_part(manifest.components, "tickets", "nope") is None
    assert manifest.key_names() == ["MY_TEAM_TOKEN"]  # each model's own api_key_env, for git's environment


def test_a_manifest_this_version_does_not_write_is_refused_in_one_line(tmp_path):
    from bargain_ray.store import UnreadableManifest

    (tmp_path / "manifest.json").write_text('{"grid": "demo", "created": "20261201", "components": {}}')
    with pytest.raises(UnreadableManifest) as exc:
        read_manifest(tmp_path)
    assert str(exc.value).startswith(f"{tmp_path / 'manifest.json'} does not record") and "\n" not in str(exc.value)


# --- ./conf: a file with a packaged file's name takes its place, is recorded, and is compared where it lands ---

PACKAGED = conf_dir()


def local_copy(tmp_path: Path, name: str, edit) -> Path:
    """``./conf/<name>`` in ``tmp_path``: the packaged file of that name with ``edit`` applied to its text."""
    target = tmp_path / "conf" / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(edit((PACKAGED / name).read_text()))
    return target


def test_a_local_file_takes_the_packaged_ones_place_and_the_manifest_names_it(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert load_config("c3_smoke").config.local_conf == []
    local_copy(tmp_path, "game/tickets.yaml", lambda t: t.replace("max_turns: 12", "max_turns: 7"))
    local_copy(tmp_path, "grid/c3_smoke.yaml", lambda t: t.replace("blocks: 1", "blocks: 2"))
    sweep = load_config("c3_smoke")
    assert sweep.game_configs["game tickets under condition C3"].max_turns == 7 and sweep.grid.blocks == 2
    digest = hashlib.sha256((tmp_path / "conf/game/tickets.yaml").read_bytes()).hexdigest()[:16]
    files = {f.path: f for f in sweep.config.local_conf}
    assert set(files) == {"conf/game/tickets.yaml", "conf/grid/c3_smoke.yaml"}
    assert files["conf/game/tickets.yaml"].sha256 == digest and files["conf/game/tickets.yaml"].replaces
    manifest = open_manifest(tmp_path / "sweep", describe(sweep, "20261027"))
    assert read_manifest(tmp_path / "sweep").local_conf == manifest.local_conf == sweep.config.local_conf
    note = local_conf_note(sweep.config.local_conf)
    assert note is not None and "conf/game/tickets.yaml (in place of the packaged one)" in note
    assert main(["+grid=c3_smoke", "run.dry_run=true", f"run.dir={tmp_path / 'dry'}"]) == 0
    assert capsys.readouterr().out.startswith(note + "\n")  # the terminal says so first


def test_a_changed_brief_word_in_local_conf_refuses_a_folder_played_with_the_packaged_brief(
        tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "sweep"
    play_demo(folder, 2)  # played with the packaged brief
    assert main(["+grid=demo", f"run.dir={folder}", "run.dry_run=true"]) == 0
    capsys.readouterr()
    local_copy(tmp_path, "game/tickets.yaml", lambda t: t.replace("staff outing", "team outing"))
    assert main(["+grid=demo", f"run.dir={folder}", "run.dry_run=true"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: {folder} holds games of another config: games.tickets.situation ") and "team" in err


def test_the_end_of_run_summary_names_the_local_conf_files_too(tmp_path, monkeypatch, capsys, ray_session):
    """The note the terminal shows first stands again at the head of the summary, where a long run's reader looks."""
    monkeypatch.chdir(tmp_path)
    local_copy(tmp_path, "game/tickets.yaml", lambda t: t.replace("staff outing", "team outing"))
    assert main(["+grid=demo", "grid.blocks=1", f"run.dir={tmp_path / 'sweep'}", "run.progress=false",
                 "run.report=false"]) == 0
    out = capsys.readouterr().out
    note = "config from ./conf: conf/game/tickets.yaml (in place of the packaged one)"
    assert out.startswith(note + "\n") and f"\n{note}\nsweep folder: {tmp_path / 'sweep'}\n" in out


@pytest.mark.parametrize(("field", "value"), [("grid.seed", 8), ("models.O.max_tokens", 9999)])
def test_a_hand_edit_of_the_manifests_top_is_refused_on_resume_and_by_readers(tmp_path, capsys, field, value):
    """The top of the manifest (the current design's config, which the card and the report publish) went unchecked:
    a resume compared the recorded designs only, so a hand-edited seed was published as the sweep's."""
    from bargain_ray.store import UnreadableManifest

    args = ["+grid=c3_smoke", "provider=sim", "run.dry_run=true", f"run.dir={tmp_path}"]
    plan(load_config("c3_smoke", ["provider=sim", f"run.dir={tmp_path}"]), tmp_path)  # a real run's plan, no game yet
    target = tmp_path / "manifest.json"
    data = json.loads(target.read_text())
    *parents, leaf = field.split(".")
    node = data["config"]
    for key in parents:
        node = node[key]
    played, node[leaf] = node[leaf], value
    target.write_text(json.dumps(data))
    capsys.readouterr()
    assert main(args) == 1
    assert capsys.readouterr().err == (
        f"error: {target} was edited by hand: config.{field} is {value} at the top but {played} in the design its "
        f"games were played with (designs.0); nothing was read. Set it back to {played} (or restore the file from a "
        "backup).\n")
    with pytest.raises(UnreadableManifest, match="was edited by hand"):
        read_manifest(tmp_path)
