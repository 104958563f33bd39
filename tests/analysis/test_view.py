"""The live view: follows a sweep folder incrementally through the store and never writes it; in headless
Chromium, its page shows the count of finished games grow while a real sweep runs, is titled by its folder, shows
an ended sweep's final figures, a dry run's plan, rates from the journals' times, the report, each game in
flight's latest reply, private fields only marked private, and nothing a hostile query string injects."""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from grids import dom, play_grid
from helpers import ROOT
from test_analysis import make_sweep

from bargain_ray.analysis.report import build_report
from bargain_ray.analysis.view import Follower, event_time, list_sweeps, planned_units
from bargain_ray.clients.snapshot import KeyLimit, KeySnapshot, key_limits
from bargain_ray.core.records import GameRecord
from bargain_ray.store import CALLS_JOURNAL, JOURNAL, read_manifest, write_status
from bargain_ray.store.journal import parse_record
from bargain_ray.store.jsonl import tail_lines
from bargain_ray.store.status import write_limiter

HOLD = ("import sys, time; from pathlib import Path; from bargain_ray.store import hold_lock\n"
        "with hold_lock(Path(sys.argv[1])):\n    print('held', flush=True); time.sleep(300)\n")
"""A driver holding a folder, as the view sees one: the lock is what says a sweep runs."""


def state(folder: Path) -> dict[str, tuple[int, int]]:
    return {str(p): (p.stat().st_size, p.stat().st_mtime_ns) for p in folder.rglob("*")}


def test_the_follower_reads_each_line_once_and_writes_nothing(tmp_path):
    folder = make_sweep(tmp_path / "sweep")
    before = state(folder)
    follower = Follower(folder)
    snap = follower.snapshot()
    assert snap.finished == 12 and sum(c.finished for c in snap.cells) == 12
    assert {c.cell for c in snap.cells} == {json.loads(line)["unit"]["cell"]
                                            for line in (folder / JOURNAL).read_text().splitlines()}
    assert snap.errors and any("529" in e["error"] for e in snap.errors)  # the technical failure is listed
    assert len(snap.latest) == 8 and all(g.turns and g.deal for g in snap.latest)
    assert any(g.deal.startswith("deal: unit_price_usd") and "gain_buyer" in g.deal for g in snap.latest)
    assert state(folder) == before  # read through the store, never written
    offset = follower.offsets[JOURNAL]
    lines = (folder / JOURNAL).read_bytes().splitlines(keepends=True)
    with (folder / JOURNAL).open("ab") as f:
        f.write(lines[0][:40])  # a torn tail: not yet a line
    assert tail_lines(folder / JOURNAL, offset) == ([], offset)
    with (folder / JOURNAL).open("ab") as f:
        f.write(lines[0][40:])
    again = follower.snapshot()
    assert again.finished == 12 and follower.offsets[JOURNAL] == offset + len(lines[0])  # the same unit, read once
    assert [s["name"] for s in list_sweeps(tmp_path)] == ["sweep"]


def test_limiter_rows_name_this_sweeps_models_without_the_key_digest():
    raw = {"anthropic:0123456789ab:claude-opus-5-5": KeySnapshot(
               window=4, slow_start=False, in_flight=2, waiting=1, paces={"requests_per_minute": 50}, paused_until=110.0),
           "openai:ba9876543210:gpt-other": KeySnapshot(window=1, slow_start=True, in_flight=0, waiting=0)}
    rows = key_limits(raw, {"claude-opus-5-5"}, now=100.0)
    assert [(r.key, r.window, r.paused_for_s) for r in rows] == [("anthropic:claude-opus-5-5", 4, 10.0)]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def serving(root: Path) -> Iterator[str]:
    """``python -m bargain_ray.view --root ROOT`` on a free port; yields its address."""
    port = free_port()
    view = subprocess.Popen([sys.executable, "-m", "bargain_ray.view", "--root", str(root), "--port", str(port)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert view.stdout.readline().startswith(f"live view: http://127.0.0.1:{port}/")
        yield f"http://127.0.0.1:{port}/"
    finally:
        view.terminate()
        view.wait(timeout=10)


@contextmanager
def held(folder: Path) -> Iterator[subprocess.Popen]:
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(folder)], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        yield holder
    finally:
        holder.kill()
        holder.wait()


def page_of(url: str, profile: Path) -> str:
    """The DOM once the page's first polls answered, its script left out (its text names every heading)."""
    out = dom(url, profile, budget_ms=4000)
    assert 'id="finished"' in out, out[-2000:]
    return re.sub(r"<script>.*?</script>", "", out, flags=re.S)


def finished_on_page(url: str, profile: Path) -> int:
    m = re.search(r'id="finished" data-finished="(\d+)"', page_of(url, profile))
    return int(m.group(1))


def grew(counts: list[int]) -> bool:
    """The page's finished count rose while the sweep still ran (to a figure short of its 16 games)."""
    return any(b > a for a, b in zip(counts, counts[1:], strict=False) if b < 16)


def test_the_page_shows_finished_games_grow_while_a_sweep_runs(tmp_path, sweep_env):
    assert shutil.which("chromium"), "Debian's chromium is required: apt-get install -y chromium"
    folder = tmp_path / "outputs" / "live"
    sweep = subprocess.Popen(
        [sys.executable, "-m", "bargain_ray", "+grid=c3_smoke", "provider=sim", f"run.dir={folder}",
         "run.progress=false", "provider.settings.latency.median_s=0.5"],
        env=sweep_env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    port, view = free_port(), None
    try:
        deadline = time.monotonic() + 200
        while not (folder / JOURNAL).exists() or not (folder / JOURNAL).read_bytes():
            assert sweep.poll() is None and time.monotonic() < deadline, sweep.stdout.read() if sweep.poll() else ""
            time.sleep(0.3)
        view = subprocess.Popen([sys.executable, "-m", "bargain_ray.view", str(folder), "--port", str(port)],
                                env=sweep_env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert view.stdout.readline().startswith(f"live view: http://127.0.0.1:{port}/?sweep=live")
        url = f"http://127.0.0.1:{port}/?sweep=live"
        first = finished_on_page(url, tmp_path / "profile")
        counts = [first]
        while sweep.poll() is None and time.monotonic() < deadline and not grew(counts):
            time.sleep(0.5)  # each render takes a second or more: the page is read until it has grown once
            counts.append(finished_on_page(url, tmp_path / "profile"))
        assert sweep.wait(timeout=60) == 0, sweep.stdout.read()[-3000:]
        ended = page_of(url, tmp_path / "profile")  # one render of the ended page: its count and its figures
        counts.append(int(re.search(r'id="finished" data-finished="(\d+)"', ended).group(1)))
    finally:
        if view is not None:
            view.terminate()
            view.wait(timeout=10)
        if sweep.poll() is None:
            sweep.terminate()
    assert 1 <= first < 16 and counts[-1] == 16, counts
    assert grew(counts), counts
    # ended: its final figures, the report it wrote, rates from the journal, no limiter rows as if live
    assert 'data-phase="ended"' in ended and "Final figures by model" in ended and "Rate limiter" not in ended
    assert '<a href="files/live/report.html" id="report">' in ended and "calls from the first to the last" in ended


def test_an_ended_sweep_shows_final_figures_titled_by_its_folder_with_its_report(tmp_path):
    """Issue 18: the view titled a folder by its grid and showed an ended sweep's last limiter rows as if live
    (``in flight 32, waiting 53``), with no link to the report."""
    folder = make_sweep(tmp_path / "c3_full-sim")
    write_status(folder, "ended", 12)
    write_limiter(folder, [KeyLimit(key="anthropic:model-x", window=8, slow_start=False, in_flight=32, waiting=53,
                                    paces={}, paused_for_s=0.0)])
    build_report(folder)
    with serving(tmp_path) as base:
        shown = page_of(f"{base}?sweep=c3_full-sim", tmp_path / "p")
        report = subprocess.run(["curl", "-s", f"{base}files/c3_full-sim/report.html"], capture_output=True, text=True)
        outside = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}",
                                  f"{base}files/c3_full-sim/..%2fc3_full-sim%2fmanifest.json"], capture_output=True, text=True)
    assert "<title>c3_full-sim · bargain_ray live view</title>" in shown
    assert '<h1 id="title">Sweep c3_full-sim (grid test)</h1>' in shown
    assert 'data-phase="ended"' in shown and "Final figures by model" in shown
    assert "Rate limiter" not in shown and ">53<" not in shown  # the last limiter state is not shown as live
    assert '<a href="files/c3_full-sim/report.html" id="report">' in shown
    assert report.stdout.startswith("<!doctype html>") and "Sweep report: c3_full-sim" in report.stdout
    assert outside.stdout == "404"  # only the report and what it links to are served


def test_a_planned_folder_is_planned_not_started_with_its_units(tmp_path):
    """A folder whose run wrote its plan (the manifest, before Ray) and played nothing yet was listed as
    ``? units, unknown``. (A dry run writes no folder at all: tests/execution/test_sweep.py.)"""
    from bargain_ray.design import load_config
    from bargain_ray.execution.plan import plan

    folder = tmp_path / "demo-plan"
    assert plan(load_config("demo", [f"run.dir={folder}"]), folder).count == 60
    assert planned_units(read_manifest(folder)) == 60
    assert list_sweeps(tmp_path) == [{"name": "demo-plan", "units": 60, "state": "planned"}]
    snap = Follower(folder).snapshot()
    assert (snap.phase, snap.units, snap.finished, snap.note) == ("planned", 60, 0, None)
    with serving(tmp_path) as base:
        shown = page_of(f"{base}?sweep=demo-plan", tmp_path / "p")
    assert "planned, not started: 60 units, none played yet" in shown
    assert "demo-plan</a> 60 units, planned, not started" in shown


def calls_at(folder: Path, when: list[datetime]) -> None:
    """One reply journaled per time of ``when``, as the call journal records them (the reply's ``sent_at`` and
    ``answered_at``, UTC)."""
    with (folder / CALLS_JOURNAL).open("a") as f:
        for i, at in enumerate(when):
            f.write(json.dumps({"unit_id": f"u{i}", "call_id": f"u{i}-k01", "prompt": "p",
                                "reply": {"provider": "sim", "model": "m", "request": {}, "text": "{}",
                                          "sent_at": (at - timedelta(seconds=1)).isoformat(),
                                          "answered_at": at.isoformat()}}) + "\n")


def test_rates_come_from_the_journals_times_not_from_when_the_view_opened(tmp_path):
    """Issue 18: "calls in the last minute" counted only the calls since the view started watching. With
    timestamps the rate is the journal's: the calls within a minute of its latest, however long ago it ran."""
    folder = make_sweep(tmp_path / "s")
    then = datetime(2026, 1, 5, 12, 0, tzinfo=UTC)
    calls_at(folder, [then - timedelta(seconds=s) for s in (300, 90, 50, 20, 0)])
    rates = Follower(folder).snapshot().rates
    assert (rates.calls_last_minute, rates.timed_by) == (3, "journal")
    assert rates.last_s - rates.first_s == 300 and rates.last_s == then.timestamp()
    assert event_time(None, datetime.fromtimestamp(1.5e9, UTC)) == 1.5e9  # the first time a line records
    # without timestamps: lines there before the view looked have no time; later ones the journal file's time
    bare = make_sweep(tmp_path / "bare")
    follower = Follower(bare)
    assert follower.snapshot().rates.timed_by == "none"
    with (bare / CALLS_JOURNAL).open("a") as f:
        f.write(json.dumps({"unit_id": "u", "call_id": "u-k01", "prompt": "p",
                            "reply": {"provider": "sim", "model": "m", "request": {}, "text": "{}"}}) + "\n")
    rates = follower.snapshot().rates
    assert (rates.calls_last_minute, rates.timed_by) == (1, "file")
    assert rates.last_s == (bare / CALLS_JOURNAL).stat().st_mtime


def replies_of(rec: GameRecord) -> list[dict]:
    """A game's calls as the call journal holds them while it runs (one line per paid reply)."""
    meta = ("provider", "model", "request", "stop_reason", "usage", "latency_s", "attempts", "attempt_errors",
            "request_id", "model_version", "served_by", "cost_usd")
    return [{"unit_id": c.unit_id, "call_id": c.call_id, "prompt": "p",
             "reply": c.model_dump(mode="json", include=set(meta)) | {"text": c.response_text}} for c in rec.calls]


def inside_private(page: str, text: str) -> bool:
    """Whether every occurrence of ``text`` in the DOM sits in an element marked private."""
    spans = [(m.start(), m.end()) for m in re.finditer(r'<div class="private">.*?</div>', page, re.S)]
    hits = [m.start() for m in re.finditer(re.escape(text), page)]
    return bool(hits) and all(any(a <= h < b for a, b in spans) for h in hits)


def test_a_running_games_latest_reply_is_readable_and_private_fields_are_marked(tmp_path):
    """Issue 17: the view showed bargaining's ``actual_valuation`` unmarked while the report marked it private.
    Each finished turn's private fields, and a game in flight's private reasoning, are shown only marked."""
    done = tmp_path / "done"
    play_grid("bargaining_demo", done, limit=4)
    lines = (done / JOURNAL).read_bytes().splitlines(keepends=True)
    last = parse_record(lines[-1])
    folder = tmp_path / "live"
    folder.mkdir()
    shutil.copy(done / "manifest.json", folder)
    (folder / JOURNAL).write_bytes(b"".join(lines[:-1]))
    calls = replies_of(last)[:3]
    (folder / CALLS_JOURNAL).write_text("".join(json.dumps(c) + "\n" for c in calls))
    latest = json.loads(calls[-1]["reply"]["text"])
    valuations = {str(t.fields.actual_valuation) for t in last.turns}
    write_status(folder, "running", 4)
    with held(folder), serving(tmp_path) as base:
        snap = Follower(folder).snapshot()
        shown = page_of(f"{base}?sweep=live", tmp_path / "p")
    flight = snap.in_flight
    assert snap.phase == "running" and [t.call_id for t in flight] == [calls[-1]["call_id"]]
    assert flight[0].message == latest["message"] and flight[0].private == {"reasoning_private": latest["reasoning_private"]}
    assert "reasoning_private" not in flight[0].action
    section = shown[shown.index('id="in-flight"'):]
    assert latest["message"] in section and inside_private(section, "PRIVATE · reasoning_private")
    assert inside_private(shown, latest["reasoning_private"])
    finished = [t for g in snap.latest for t in g.turns]
    assert finished and all("actual_valuation" in t.private and "actual_valuation" not in t.action for t in finished)
    assert inside_private(shown, "actual_valuation") and valuations  # never a bare field of a turn's action


def test_a_hostile_query_string_injects_nothing(tmp_path):
    """Issue 16: ``GET /?sweep=</script><script>alert(1)</script>`` returned ``var sweep = "</script><script>...";``.
    Every value placed in the page is escaped for its context: the DOM holds one script, the page's own."""
    make_sweep(tmp_path / "s")
    hostile = '</script><script>document.title="pwned"</script><img src=x onerror=document.title="pwned">'
    with serving(tmp_path) as base:
        from urllib.parse import quote

        url = f"{base}?sweep={quote(hostile)}"
        raw = subprocess.run(["curl", "-s", url], capture_output=True, text=True).stdout
        assert "</script><script>" not in raw and "<img" not in raw
        shown = dom(url, tmp_path / "p", budget_ms=3000)
    assert shown.count("<script") == 1 and "<img" not in shown  # the page's own script, no element injected
    assert "<title>&lt;/script&gt;&lt;script&gt;document.title=" in shown and "<title>pwned" not in shown
    assert "no sweep of that name here" in shown


@pytest.mark.parametrize("name", ["</script><b>x</b>", "a\u2028b", "<!--"])
def test_script_values_cannot_close_the_script(name):
    from bargain_ray.analysis.page import script_value

    text = script_value(name)
    assert "<" not in text and ">" not in text and "\u2028" not in text and json.loads(text) == name


def fetch(root: Path, *paths: str) -> list[tuple[int, bytes]]:
    """(status, body) of each GET on the view's app over ``root``, served in this process on a free port."""
    from aiohttp.test_utils import TestClient, TestServer

    from bargain_ray.analysis.view import make_app

    async def get_all() -> list[tuple[int, bytes]]:
        async with TestClient(TestServer(make_app(root))) as client:
            out = []
            for path in paths:
                async with client.get(path) as r:
                    out.append((r.status, await r.read()))
            return out

    import asyncio

    return asyncio.run(get_all())


def test_the_view_serves_an_exact_allow_list_of_a_sweeps_files(tmp_path):
    """A name that only starts like an allowed one (``journal.jsonl.bak``), a file the export never writes under
    ``dataset/``, and a path that climbs back out of ``dataset/`` into the folder were served (prefix match)."""
    folder = make_sweep(tmp_path / "s")
    build_report(folder)
    planted = ["journal.jsonl.bak", "report.html.old", "report-by-x.html.key", "dataset/notes.txt",
               "dataset/data/notes.csv", "secret.html"]
    for name in planted:
        (folder / name).write_text("not to be served")
    raw = next((folder / "dataset" / "raw").iterdir()).name
    served = ["report.html", "journal.jsonl", "dataset/README.md", "dataset/data/games.csv",
              "dataset/metrics/operational.parquet", "dataset/spec/manifest.json", f"dataset/raw/{raw}"]
    refused = [*planted, "dataset%2F..%2Fdriver.lock", "dataset%2F..%2Fjournal.jsonl.bak", "manifest.json",
               "tables.json"]
    answers = fetch(tmp_path, *(f"/files/s/{p}" for p in served + refused))
    assert [a[0] for a in answers[:len(served)]] == [200] * len(served)
    assert [a[0] for a in answers[len(served):]] == [404] * len(refused)
    assert all(b"not to be served" not in body for _, body in answers)


def test_a_corrupt_journal_line_is_one_error_row_and_the_lines_after_it_are_read(tmp_path):
    """The view answered a corrupt line with HTTP 500 and a traceback, and read nothing past it."""
    folder = make_sweep(tmp_path / "s")
    lines = (folder / JOURNAL).read_bytes().splitlines(keepends=True)
    bad = [b"not json\n", b'{"unit": ' + b"[" * 5000 + b"]" * 5000 + b"}\n", b'{"unit": {"unit_id": 7}}\n']
    (folder / JOURNAL).write_bytes(b"".join([lines[0], *bad, *lines[1:]]))
    calls_at(folder, [datetime(2026, 1, 5, 12, 0, tzinfo=UTC)])
    with (folder / CALLS_JOURNAL).open("ab") as f:
        f.write(b"[" * 5000 + b"]" * 5000 + b"\n")
    snap = Follower(folder).snapshot()
    assert snap.finished == 12, "every good line is read, those after the bad ones too"
    rows = [e for e in snap.errors if e["unit_id"] is None]
    assert sorted(e["what"] for e in rows) == [f"{CALLS_JOURNAL} line 2, left out",
                                               *(f"{JOURNAL} line {n}, left out" for n in (2, 3, 4))]
    assert all("\n" not in e["error"] and e["error"].startswith("not ") for e in rows)
    status, body = fetch(tmp_path, "/api/sweep?name=s")[0]
    assert status == 200 and json.loads(body)["finished"] == 12


def test_a_game_in_flights_reply_that_nests_past_the_limit_is_shown_as_text(tmp_path):
    from bargain_ray.analysis.view import shown_reply
    from bargain_ray.core.records import Reply
    from bargain_ray.store import CallEntry

    text = "[" * 2000 + "]" * 2000
    entry = CallEntry(unit_id="u", call_id="u-k01", prompt="p", reply=Reply(provider="sim", model="m", request={},
                                                                           text=text))
    assert shown_reply(entry, ["multi_issue"]).message == text  # RecursionError (HTTP 500) before


def test_a_sweep_folder_linked_into_the_root_is_listed_and_served_alike(tmp_path):
    """The view listed a symlinked sweep folder and then answered 404 for it."""
    folder = make_sweep(tmp_path / "elsewhere" / "s")
    build_report(folder)
    root = tmp_path / "root"
    root.mkdir()
    (root / "linked").symlink_to(folder)
    (root / "dangling").symlink_to(tmp_path / "gone")
    assert [s["name"] for s in list_sweeps(root)] == ["linked"]
    (sweep, body), (report, _), (gone, _) = fetch(root, "/api/sweep?name=linked", "/files/linked/report.html",
                                                  "/api/sweep?name=dangling")
    assert (sweep, report, gone) == (200, 200, 404) and json.loads(body)["finished"] == 12
