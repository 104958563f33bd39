"""Judging a finished orange rehearsal: the judge prints kappa with its interval, flags swap flips and observers that
played a party; it changes nothing of the sweep; run again it pays nothing twice, grown it keeps every read made;
killed (SIGKILL) while its batches are open and run again, the simulated provider receives each read once; a panel
mistake is one line before Ray; a game whose transcript changed is never judged with its old reads."""

from __future__ import annotations

import contextlib
import io
import json
import signal
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from conftest import JUDGE, ORANGE
from helpers import ROOT
from statsmodels.stats.inter_rater import cohens_kappa

from bargain_ray.core.hashing import file_digest
from bargain_ray.core.records import GameRecord
from bargain_ray.design.judging import JudgedGame, judged_game
from bargain_ray.games import load_game
from bargain_ray.games.freetext.engine import ALLOCATION_TYPES
from bargain_ray.games.freetext.reading import reading_config
from bargain_ray.judge import main
from bargain_ray.providers.sim import SimServer, SimSettings
from bargain_ray.store import read_batches, read_calls, read_latest, read_manifest
from bargain_ray.store.journal import parse_record
from bargain_ray.store.judging import judging_dir, read_labels, read_reads


def judge(*args: str) -> tuple[int, str, str]:
    """The judge in-process (on the session's Ray): (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


def test_the_judge_prints_kappa_with_an_interval_and_flags_swap_flips_and_same_model_observers(judged_sweep, tmp_path):
    folder, out, _ = judged_sweep(tmp_path / "s")
    reads = read_reads(folder)
    assert reads.height == 12 * 2 * 2 * 2 and reads["known"].all()  # 12 games x 2 readers x 2 orders x 2 repeats
    assert "judging" in out and "paid now: 96 calls" in out and "batches sent through batch APIs" in out
    kappa = r"Fleiss' kappa -?\d\.\d\d \[-?\d\.\d\d, \d\.\d\d\] \(12 games\), Krippendorff's alpha -?\d\.\d\d \["
    assert __import__("re").search(kappa, out), out
    assert "Cohen's kappa recorded verdict vs G gpt-5-mini:" in out
    flips = reads.filter(pl.col("swapped")).join(reads.filter(~pl.col("swapped")), on=["unit_id", "reader", "repeat"])
    flipped = flips.filter(pl.col("allocation_type") != pl.col("allocation_type_right"))
    assert flipped.height, "three misreads in ten: some repeat flips under the swap"
    first = flipped.sort("read_id")["unit_id"].unique(maintain_order=True).to_list()
    line = next(x for x in out.splitlines() if x.startswith("  swap flips of O claude-opus-5-5"))
    assert any(game in out for game in first) and "two repeats as played differ in" in line
    # the OOO cells: the game's observer is the model of both parties (opus), and only there
    assert "flagged: reader O (claude-opus-5-5) is the model of a party in 6 games it read (battery FT|OOO|a1, " \
           "orange FT|OOO|a1)" in out
    assert not reads.filter(pl.col("reader") == "G")["same_model"].any()


def test_judging_changes_nothing_of_the_sweep_and_never_names_a_model_to_its_readers(judged_sweep, tmp_path):
    folder, _, before = judged_sweep(tmp_path / "s")
    after = {str(p.relative_to(folder)): file_digest(p) for p in folder.rglob("*")
             if p.is_file() and judging_dir(folder) not in p.parents}
    assert after == before  # games.parquet, the journals, the manifest: byte for byte
    models = {m.name for m in read_manifest(folder).config.models.values()} | {"gpt-5-mini"}
    for record in read_latest(judging_dir(folder)):
        for call in record.calls:
            sent = json.dumps(call.request)
            assert not any(name in json.dumps(call.request.get("messages")) or name in call.request.get("system", "")
                           for name in models), sent[:300]


def test_run_again_it_reads_nothing_anew_and_grown_it_keeps_every_read_made(judged_sweep, tmp_path):
    folder, _, _ = judged_sweep(tmp_path / "s")
    args = [str(folder), "provider=sim", "provider.settings.misread=0.3", "run.progress=false",
            "run.batch_api=false"]
    code, out, _ = judge(*args)
    assert code == 0 and "96 reads, 96 finished, 0 to run" in out and "paid now: 0 calls" in out
    code, out, _ = judge(*args, "panel.repeats=3")
    assert code == 0 and "144 reads, 96 finished, 48 to run" in out and "paid now: 48 calls" in out
    assert read_reads(folder).height == 144


def test_a_human_labels_file_gives_kappa_against_each_human_and_a_bad_one_is_refused_before_any_read(
        judged_sweep, tmp_path):
    folder, _, _ = judged_sweep(tmp_path / "s")
    recorded = read_reads(folder).select("unit_id", "recorded").unique().sort("unit_id").rows()
    ben = [(game, "lopsided" if i < 4 else verdict) for i, (game, verdict) in enumerate(recorded)]
    csv = tmp_path / "labels.csv"
    csv.write_text("unit_id,allocation_type,rater\n" + "".join(
        f"{game},{verdict},{rater}\n" for rater, labels in (("ana", recorded), ("ben", ben)) for game, verdict in labels))
    code, out, err = judge(str(folder), *JUDGE, "--human", str(csv))
    assert code == 0 and "paid now: 0 calls" in out, err
    table = np.zeros((len(ALLOCATION_TYPES), len(ALLOCATION_TYPES)))
    for (_, truth), (_, label) in zip(recorded, ben, strict=True):
        table[ALLOCATION_TYPES.index(truth), ALLOCATION_TYPES.index(label)] += 1
    expected = cohens_kappa(table, return_results=False)
    assert "Cohen's kappa recorded verdict vs ana (human): 1.00" in out  # ana labelled as the games were recorded
    assert f"Cohen's kappa recorded verdict vs ben (human): {expected:.2f} [" in out and expected < 1
    labels = read_labels(folder)
    assert labels is not None and labels.height == 2 * len(recorded)  # kept for the report

    csv.write_text(f"unit_id,allocation_type\n{recorded[0][0]},split\n")
    code, out, err = judge(str(folder), *JUDGE, "panel.repeats=3", "--human", str(csv))
    assert code == 1 and err == (f"error: {csv}:2: allocation_type 'split' is not one of integrative_full, "
                                 "integrative_partial, distributive, lopsided, none\n")
    assert out == "" and read_reads(folder).height == 96  # panel.repeats=3 would have read 48 more


def sim_log(url: str) -> list[dict]:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(f"{url}/sim/log", timeout=10) as response:
        return json.load(response)


def test_killed_while_its_batches_are_open_and_run_again_it_pays_no_read_twice(
        finished_sweep, sweep_env, tmp_path: Path) -> None:
    """The sim serves from this process: it outlives the judge's SIGKILL, and its log counts every request."""
    folder = finished_sweep(list(ORANGE), tmp_path / "s")
    with SimServer(SimSettings(misread=0.3, batch={"delay_s": 0.75})) as url:
        args = [str(folder), "provider=sim", f"provider.settings.base_url={url}", "run.progress=false",
                "run.batch.max_wait_s=0.3", "run.batch.poll_s=0.2"]
        proc = subprocess.Popen([sys.executable, "-m", "bargain_ray.judge", *args], env=sweep_env, cwd=ROOT,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        path, deadline = judging_dir(folder), time.time() + 180
        while proc.poll() is None and time.time() < deadline and not (
                (path / "batches.journal.jsonl").exists() and read_batches(path)):
            time.sleep(0.01)
        assert proc.poll() is None, "the judge ended before its first batch was journaled"
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        open_at_kill = {c for b in read_batches(path) for c in b.calls}
        delivered = {e.call_id for entries in read_calls(path, skip=set()).values() for e in entries}
        assert open_at_kill and not open_at_kill <= delivered, "the kill must land while a journaled batch is open"

        code, out, err = judge(*args)
        log = sim_log(url)
    assert code == 0, err
    reads = read_reads(folder)
    assert reads.height == 96 and reads["known"].all()
    received = Counter(e.get("custom_id") or e.get("call_id") for e in log)
    assert len(received) == 96 and max(received.values()) == 1, received.most_common(3)  # each read paid once


def test_a_panel_mistake_is_one_line_before_any_read(finished_sweep, tmp_path):
    folder = finished_sweep(list(ORANGE), tmp_path / "s")
    for args, line in (
        (["panel.repeats=0"], "error: panel.repeats=0: must be >= 1"),
        (["panel.repeat=2"], "error: unknown key panel.repeat; did you mean panel.repeats?"),
        (["provider=sim", "+model@panel.observers.O=gpt-5-mini"], "error: panel.observers.O: the sweep's models already use letter O "
                                                  "(claude-opus-5-5); name this observer with another letter"),
        (["provider=sim", "provider.settings.misread=2"], "error: provider.settings.misread=2: must be <= 1"),
        ([], "error: provider=default: the games were played with provider=sim and the game's observer (model O) "
             "reads again as the games called it: judge with provider=sim, or set panel.game_observer=false"),
    ):
        code, out, err = judge(str(folder), *args)
        assert code == 1 and err.startswith(line) and len(err.splitlines()) == 1, (args, err)
    assert not judging_dir(folder).exists()  # refused before the judging folder was made
    code, _, err = judge(str(tmp_path / "nowhere"))
    assert code == 1 and "is not a sweep folder: no manifest.json" in err


def test_a_game_whose_transcript_changed_is_never_judged_with_its_old_reads(judged_sweep, tmp_path):
    folder, _, _ = judged_sweep(tmp_path / "s")
    journal = folder / "journal.jsonl"
    lines = journal.read_bytes().splitlines(keepends=True)
    record = parse_record(lines[0])
    turn = next(t for t in record.turns if t.fields.written().get("action") == "MESSAGE")
    said = turn.fields.written()["message"]
    lines[0] = lines[0].replace(json.dumps(said).encode(), json.dumps(said + " Truly.").encode())
    journal.write_bytes(b"".join(lines))
    code, _, err = judge(str(folder), "provider=sim", "run.progress=false")
    assert code == 1 and f"read {record.unit.unit_id}-j" in err and "Reads are never mixed" in err, err
    assert f"game {record.unit.unit_id}'s transcript" in err and len(err.splitlines()) == 1


@pytest.fixture
def orange_game(judged_sweep, tmp_path) -> tuple[JudgedGame, GameRecord, object]:
    folder, _, _ = judged_sweep(tmp_path / "s")
    record = next(r for r in read_latest(folder) if r.unit.game == "orange" and r.outcome.agreement)
    config = load_game(read_manifest(folder).components["game orange under condition FT"]["config"]).config
    return judged_game(record, config), record, config


def test_a_read_as_played_asks_the_observer_what_the_games_final_verdict_was_asked(orange_game):
    judged, record, config = orange_game
    final = next(c for c in reversed(record.calls) if c.role == "observer")
    game = load_game(reading_config(config, len(judged.transcript)).model_dump())
    from bargain_ray.games.freetext.engine import State

    state = State(first_speaker=judged.first_speaker, transcript=judged.transcript)
    asked = game.prompt(state, "observer")
    assert asked.system == final.request["system"]
    assert asked.messages[0].content == final.request["messages"][0]["content"]  # the transcript word for word
    swapped = load_game(reading_config(config, len(judged.transcript), swapped=True).model_dump())
    text = swapped.prompt(state, "observer").messages[0].content
    assert text.startswith("Transcript so far:\n\nTurn 1, Party B: ") and "Turn 2, Party A: " in text
    named = load_game(reading_config(config, len(judged.transcript), models=judged.parties).model_dump())
    assert "Turn 1, Party A (claude-" in named.prompt(state, "observer").messages[0].content
