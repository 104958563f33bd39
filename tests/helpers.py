"""Small helpers shared by tests: load a game config, play scripted replies."""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import subprocess
import threading
import uuid
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import polars as pl
import pytest
import yaml
from aiohttp import web

from bargain_ray.agents.replay import ReplayAgent
from bargain_ray.config import conf_dir
from bargain_ray.core.records import GameRecord
from bargain_ray.core.unit import Unit
from bargain_ray.games import load_game
from bargain_ray.play.loop import play

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
CONF = conf_dir()
DEMO_WHOLE = ["+grid=demo", "run.progress=false", "run.report=false", "grid.blocks=10", "run.journal_calls=true",
              "run.games_per_task=4"]
"""The uninterrupted demo sweep that killed, disk-full and resumed ones of the same grid must end equal to
(played once per session by the ``finished_sweep`` fixture)."""


def complete_lines(path: Path) -> int:
    """The lines a journal holds whole, 0 if it does not exist yet (one read while it is written may end cut)."""
    return path.read_bytes().count(b"\n") if path.exists() else 0


def read_journal(path: Path) -> list[dict]:
    """A journal's whole lines, parsed: a last line cut by a kill, or read while it is written, is left out."""
    data = path.read_bytes() if path.exists() else b""
    return [json.loads(line) for line in data[: data.rfind(b"\n") + 1].splitlines()]


RAY_START_TIMED_OUT = "The current node timed out during startup"
"""What ``ray start`` says when its raylet did not register within Ray's own fixed 30 s (seen on a loaded machine)."""


def ray_start_retried(start: Callable[[], tuple[int, str]], clear: Callable[[], None],
                      attempts: int = 3) -> tuple[int, str]:
    """``start()`` (a ``ray start``: its exit code and output), started again after ``clear()`` (what the failed one
    left) while it fails with Ray's own start-up timeout: the tests that start a Ray of their own are about joining or
    losing a cluster, not about how fast Ray starts one on a loaded machine."""
    for _ in range(attempts - 1):
        code, out = start()
        if code == 0 or RAY_START_TIMED_OUT not in out:
            return code, out
        clear()
    return start()


def undated(frame: pl.DataFrame) -> pl.DataFrame:
    """A table sorted by unit (and turn), the sweep's date taken out of its unit ids: the session's uninterrupted
    sweep an interrupted one is held against may have been played the day before (a suite run that crosses
    midnight)."""
    frame = frame.with_columns(pl.col("unit_id").str.replace(r"-\d{8}-", "-"))
    return frame.sort("unit_id", *(["turn"] if "turn" in frame.columns else []))


def read_undated(folder: Path, table: str) -> pl.DataFrame:
    """``undated`` of ``folder``'s ``table``."""
    return undated(pl.read_parquet(folder / f"{table}.parquet"))


def game_config(name: str, **overrides: Any) -> dict[str, Any]:
    return yaml.safe_load((CONF / "game" / f"{name}.yaml").read_text()) | overrides


def play_replies(config: dict[str, Any], replies: list[str], first_speaker: str | None = None, seed: int = 0) -> GameRecord:
    game = load_game(config)
    agent = ReplayAgent(deque(replies))
    unit = Unit.for_replay(config["name"], config["family"], seed, first_speaker, unit_id="test-unit")
    return asyncio.run(play(game, dict.fromkeys(game.roles, agent), unit))


def reply(action: str, offer_id: str | None = None, terms: dict | None = None, message: str = "Hello.") -> str:
    return json.dumps({"action": action, "offer_id": offer_id, "terms": terms, "message": message})


@contextmanager
def small_disk(parent: Path, size: str) -> Iterator[Path]:
    """A real tmpfs of ``size`` (e.g. ``1m``) mounted under ``parent`` (needs root); ``None`` where
    none can be mounted, so the caller can skip."""
    mount = parent / f"disk-{uuid.uuid4().hex[:6]}"
    mount.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mount)], capture_output=True)
    if made.returncode:
        yield None
        return
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=True)


def resize_disk(mount: Path, size: str) -> None:
    subprocess.run(["mount", "-o", f"remount,size={size}", str(mount)], check=True)


def recording_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A ``git`` first on PATH that writes the environment it was started with to the returned file and
    answers every command with the commit ``0123abc``."""
    dump = tmp_path / "environ"
    git = tmp_path / "bin" / "git"
    git.parent.mkdir()
    git.write_text(f"#!/bin/sh\nenv > {dump}\necho 0123abc\n")
    git.chmod(0o755)
    monkeypatch.setenv("PATH", f"{git.parent}{os.pathsep}{os.environ['PATH']}")
    return dump


MODEL_LINE = re.compile(r"^  \S+: (\d+) calls paid, \d+ replayed free(?:, \d+ failed after their retries)?; "
                        r"paid \d+ input / \d+ output tokens, \$([\d.]+)$", re.M)
PAID_NOW = re.compile(r"^paid now: (\d+) calls, \$([\d.]+)", re.M)


def assert_summary_sums(out: str) -> tuple[int, float]:
    """The summary's per-model lines sum to its "paid now" (calls exactly, dollars to the printed cent fraction);
    returns (calls, dollars) paid now."""
    models = MODEL_LINE.findall(out)
    total = PAID_NOW.search(out)
    assert total is not None, out
    calls, usd = int(total[1]), float(total[2])
    assert sum(int(n) for n, _ in models) == calls, out
    assert abs(sum(float(c) for _, c in models) - usd) <= 0.0001 * len(models), out
    return calls, usd


@contextmanager
def serve_app(app: web.Application) -> Iterator[str]:
    """An aiohttp app served on 127.0.0.1 from a thread of its own; yields its base URL."""
    loop = asyncio.new_event_loop()
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))

    async def start() -> None:
        await runner.setup()
        await web.SockSite(runner, sock).start()

    loop.run_until_complete(start())
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()
