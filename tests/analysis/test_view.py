"""The live view: follows a sweep folder incrementally through the store and never writes it; in headless
Chromium, its page shows the count of finished games grow while a real sweep runs."""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

from helpers import ROOT
from test_analysis import make_sweep

from bargain_ray.analysis.view import Follower, list_sweeps
from bargain_ray.store import JOURNAL
from bargain_ray.store.status import key_limits, tail_lines


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
    assert len(snap.latest) == 8 and all(g["turns"] and g["deal"] for g in snap.latest)
    assert any(g["deal"].startswith("deal: unit_price_usd") and "gains: buyer" in g["deal"] for g in snap.latest)
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
    raw = {"anthropic:0123456789ab:claude-opus-5-5": {"window": 4, "slow_start": False, "in_flight": 2, "waiting": 1,
                                                       "paces": {"requests_per_minute": 50}, "paused_until": 110.0},
           "openai:ba9876543210:gpt-other": {"window": 1, "slow_start": True, "in_flight": 0, "waiting": 0,
                                             "paces": {}, "paused_until": 0.0}}
    rows = key_limits(raw, {"claude-opus-5-5"}, now=100.0)
    assert [(r.key, r.window, r.paused_for_s) for r in rows] == [("anthropic:claude-opus-5-5", 4, 10.0)]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def finished_on_page(url: str, profile: Path) -> int:
    """The finished-games count the page shows once its first poll answered (headless Chromium)."""
    dom = subprocess.run(
        [shutil.which("chromium"), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         f"--user-data-dir={profile}", "--virtual-time-budget=4000", "--dump-dom", url],
        capture_output=True, text=True, timeout=60,
    ).stdout
    m = re.search(r'id="finished" data-finished="(\d+)"', dom)
    assert m, dom[-2000:]
    return int(m.group(1))


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
        while sweep.poll() is None and time.monotonic() < deadline:
            time.sleep(2)
            counts.append(finished_on_page(url, tmp_path / "profile"))
        assert sweep.wait(timeout=60) == 0, sweep.stdout.read()[-3000:]
        counts.append(finished_on_page(url, tmp_path / "profile"))
    finally:
        if view is not None:
            view.terminate()
            view.wait(timeout=10)
        if sweep.poll() is None:
            sweep.terminate()
    assert 1 <= first < 16 and counts[-1] == 16, counts
    assert any(b > a for a, b in zip(counts, counts[1:], strict=False) if b < 16), counts  # grew while running
