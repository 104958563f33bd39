"""The drift guard (issue 21.2): the simulated provider changes the version it serves one model at its N-th reply;
the sweep flags it on the terminal (a line and the summary), in calls.parquet's ``drift`` column, the live view and
the report; ``run.on_drift=stop`` stops the run with exit 1, naming the model and both versions."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
from grids import dom
from helpers import ROOT

from bargain_ray.__main__ import main
from bargain_ray.analysis.report import build_report
from bargain_ray.analysis.view import Follower
from bargain_ray.core.errors import FailureKind
from bargain_ray.core.records import Reply
from bargain_ray.design import load_config
from bargain_ray.execution.drift import DriftWatch
from bargain_ray.execution.plan import describe
from bargain_ray.providers.sim import LogEntry, SimServer, SimSettings
from bargain_ray.providers.sim.config import VersionChange
from bargain_ray.store import open_manifest, read_manifest, write_status
from bargain_ray.store.calls import CallEntry, read_call_lines

MODEL, NEW, AT = "claude-haiku-5-5", "claude-haiku-5-5-v2", 12
CHANGE = VersionChange(at_call=AT, version=NEW, model=MODEL)
SWEEP = ["+grid=c3_smoke", "provider=sim", "run.progress=false", "run.report=false", "run.workers=1"]


def drifting_sweep(folder: Path, *more: str, latency: float = 0.0) -> tuple[int, list[LogEntry]]:
    """c3_smoke against a sim that serves ``MODEL`` as ``NEW`` from its ``AT``-th reply of it: (exit code, the sim's
    request log)."""
    server = SimServer(SimSettings(served_version_change=CHANGE, latency={"median_s": latency}))
    with server as url:
        code = main([*SWEEP, f"provider.settings.base_url={url}", f"run.dir={folder}", *more])
    return code, server.log


def answer(call_id: str, version: str, fingerprint: str | None = None) -> CallEntry:
    reply = Reply(provider="sim", model=MODEL, request={}, text="{}", model_version=version,
                  system_fingerprint=fingerprint, answered_at=datetime.now(UTC))
    return CallEntry(unit_id="u", call_id=call_id, prompt="p", reply=reply)


def test_the_first_answer_is_the_reference_and_only_this_invocations_drift_stops_it(tmp_path):
    open_manifest(tmp_path, describe(load_config("c3_smoke", ["provider=sim"]), "20261201"))
    watch = DriftWatch(tmp_path, "stop")
    watch.seed([answer("k1", MODEL, "fp_a"), answer("k2", MODEL, None), answer("k3", NEW, "fp_a")])
    assert read_manifest(tmp_path).served[f"sim:{MODEL}"].call_id == "k1"  # a folder without one takes its first
    assert watch.failure is None and [d.calls for d in watch.drifts.values()] == [1]  # earlier drift: counted only
    assert watch.see(answer("k4", MODEL, "fp_a").reply, "k4") is None  # the same version, a field not reported
    drift = watch.see(answer("k5", NEW, "fp_a").reply, "k5")
    assert drift is not None and drift.calls == 2 and watch.failure.kind == FailureKind.DRIFT
    assert watch.see(answer("k6", MODEL, "fp_b").reply, "k6").served.system_fingerprint == "fp_b"  # a fingerprint too
    assert DriftWatch(tmp_path, "warn").references == watch.references  # recorded, read back by the next run


def test_the_setting_is_a_provider_setting_of_the_sim():
    sweep = load_config("c3_smoke", ["provider=sim", f"provider.settings.served_version_change.at_call={AT}",
                                     f"provider.settings.served_version_change.version={NEW}"])
    assert sweep.provider.settings.served_version_change == VersionChange(at_call=AT, version=NEW)


def test_a_version_change_at_call_n_is_flagged_in_all_four_places(ray_session, tmp_path, capsys):
    folder = tmp_path / "outputs" / "drift"
    code, log = drifting_sweep(folder)
    assert code == 0  # run.on_drift=warn (the default): the sweep goes on
    out = capsys.readouterr().out
    served = sum(1 for e in log if e.model == MODEL and e.status == 200)
    drifted = served - (AT - 1)
    reference = read_manifest(folder).served[f"sim:{MODEL}"]
    assert reference.model_version == MODEL and drifted > 0  # the first answer set the reference

    # 1. the terminal: a line when it happens, and the summary with the count
    said = f"drift: sim:{MODEL} was served as {NEW} from call "
    assert out.count(said) == 2 and "run.on_drift=warn: the sweep goes on" in out
    assert re.search(rf"{re.escape(said)}.*not as the sweep's reference {MODEL} \(its first answer, call "
                     rf"{reference.call_id}\): {drifted} calls", out)

    # 2. calls.parquet: a typed drift column, true exactly for the calls served as the new version
    calls = pl.read_parquet(folder / "calls.parquet")
    assert calls.schema["drift"] == pl.Boolean and calls.schema["answered_at"] == pl.Datetime("us", "UTC")
    assert calls.filter(pl.col("drift"))["model_version"].to_list() == [NEW] * drifted
    assert calls.filter(pl.col("model") == MODEL, ~pl.col("drift")).height == AT - 1
    assert calls.filter(pl.col("model") != MODEL)["drift"].to_list() == [False] * calls.filter(
        pl.col("model") != MODEL).height
    first = calls.filter(pl.col("drift")).sort("answered_at")["answered_at"][0]
    assert (calls.filter(pl.col("model") == MODEL, ~pl.col("drift"))["answered_at"] <= first).all()
    assert (calls["sent_at"] <= calls["answered_at"]).all() and calls["sent_at"].null_count() == 0
    games = pl.read_parquet(folder / "games.parquet")
    assert (games["started_at"] < games["ended_at"]).all()

    # 3. the live view: the snapshot the page shows, and the page itself
    rows = Follower(folder).snapshot().drift
    assert [(r.model, r.reference, r.served, r.calls) for r in rows] == [(f"sim:{MODEL}", MODEL, NEW, drifted)]
    write_status(folder, "ended", 16)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    view = subprocess.Popen([sys.executable, "-m", "bargain_ray.view", "--root", str(folder.parent), "--port",
                             str(port)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert view.stdout.readline().startswith(f"live view: http://127.0.0.1:{port}/")
        page = dom(f"http://127.0.0.1:{port}/?sweep=drift", tmp_path / "profile", budget_ms=4000)
    finally:
        view.terminate()
        view.wait(timeout=10)
    assert re.search(rf'class="technical drift">drift: sim:{MODEL} was served as {NEW} in {drifted} calls', page)

    # 4. the report (a banner and the table of what served each model) and the card
    report = build_report(folder).read_text()
    banner = re.search(r'<div class="technical" id="drift">(.*?)</div>', report).group(1)
    assert f"sim:{MODEL} answered {drifted} calls as {NEW}" in banner
    assert "> **Model drift: the provider served another version" in (folder / "dataset" / "README.md").read_text()


def test_on_drift_stop_stops_the_run_with_exit_1_naming_the_model_and_both_versions(ray_session, tmp_path, capsys):
    folder = tmp_path / "stop"
    code, log = drifting_sweep(folder, "run.on_drift=stop", latency=0.05)
    assert code == 1
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last.startswith(f"stopped (drift: sim:{MODEL} was served as {NEW} from call ")
    assert f"not as the sweep's reference {MODEL}" in last and "run.on_drift=warn" in last
    games = pl.read_parquet(folder / "games.parquet")
    stopped = games.filter(pl.col("outcome_json").str.contains(f'"kind": "{FailureKind.DRIFT.value}"'))
    assert stopped.height > 0 and games.filter(pl.col("known")).height < 16
    # no call started once the run stopped: a request arrives after the first stopped game ended only if the runner
    # (one) had sent it before it heard of the stop, so at most one per game, from a game then in flight: it ended
    # after its answer. When a request arrives is the machine's (under load one sent before the stop reaches the
    # server after the last stopped game ended), so no clock is compared beyond these; and the games in flight may
    # outnumber the stopped ones (a game whose last call was on its way ends as it would have)
    first = min(stopped["ended_at"]).timestamp()
    late = Counter(e.call_id.rsplit("-k", 1)[0] for e in log if e.arrived >= first)
    ended = dict(zip(games["unit_id"], games["ended_at"], strict=True))
    assert all(n == 1 for n in late.values()), f"a game sent a call after the stop: {late}"
    assert all(ended[unit].timestamp() >= first for unit in late), "a late request is from a game then in flight"
    assert all(isinstance(t, datetime) for t in stopped["ended_at"])

    # the journals are kept and the folder resumes: under warn the sweep ends, no paid call sent again
    paid = (folder / "calls.journal.jsonl").read_bytes()
    code, again = drifting_sweep(folder, "run.on_drift=warn")
    assert code == 0 and (folder / "calls.journal.jsonl").read_bytes().startswith(paid)
    games = pl.read_parquet(folder / "games.parquet")
    assert games.height == 16 and games["known"].all()
    ids = [e.call_id for e in read_call_lines(folder) if isinstance(e, CallEntry)]
    assert len(ids) == len(set(ids)) == len(log) + len(again)  # each request the sim served is one paid call, once
