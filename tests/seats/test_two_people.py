"""Two people in two browsers play one tickets game against each other. The driver is SIGKILLed while a turn waits
and started again with the same command: both pages continue where they were, no move is lost and no answered
turn is asked again. Every response either page received holds nothing of the other seat's private text, a hostile
message one person typed is shown to the other as text and runs nothing, and no seat's token reaches a log."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import time
from pathlib import Path

import polars as pl
import pytest
import ray
from cdp import Browser, Page
from seating import PAIR, Sweep, answer, call_of, environment, link, next_turn, write_grid

from bargain_ray.store import read_call_lines

pytestmark = pytest.mark.timeout(900)  # a cap for a loaded machine: each test waits on its pages' events

HOSTILE = '</script><script>window.pwned=1</script><img src=x onerror="window.pwned=2"> Our offer stands.'


def released(port: int, deadline_s: float = 120.0) -> None:
    """Wait until nothing listens on ``port`` any more (the killed driver's seat server is gone with its job)."""
    until = time.monotonic() + deadline_s
    while time.monotonic() < until:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) != 0:
                return
        time.sleep(0.2)
    raise AssertionError(f"port {port} still served {deadline_s} s after the driver was killed")


async def turn_of(page: Page) -> str:
    await page.phase("your_turn")
    return await call_of(page)


def test_two_people_play_one_game_through_a_driver_killed_and_restarted(ray_session, tmp_path):
    write_grid(tmp_path, "seat_pair", PAIR)
    env = environment({k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")} | {"RAY_ADDRESS": ray_session})
    folder = tmp_path / "out"
    first = Sweep(tmp_path, "seat_pair", folder, env)
    second: Sweep | None = None
    asked: dict[str, list[str]] = {"buyer": [], "seller": []}
    try:
        async def before_kill() -> tuple[Browser, Browser, Page, Page]:
            seats = await first.seats()
            buyer_browser = await Browser(tmp_path / "buyer").__aenter__()
            seller_browser = await Browser(tmp_path / "seller").__aenter__()
            buyer = await buyer_browser.page(link(seats, "tickets", "buyer"))
            seller = await seller_browser.page(link(seats, "tickets", "seller"))
            asked["seller"].append(await turn_of(seller))
            await answer(seller, "OFFER", {"terms.unit_price_usd": "95", "terms.cancellation_fee_pct": "50",
                                           "terms.name_change_notice_hours": "72", "message": HOSTILE})
            asked["buyer"].append(await turn_of(buyer))
            shown = await buyer.text("record")
            assert "</script><script>window.pwned=1</script>" in shown  # shown as the text typed...
            assert await buyer.eval("window.pwned === undefined")  # ...and nothing of it ran
            await answer(buyer, "OFFER", {"terms.unit_price_usd": "70", "terms.cancellation_fee_pct": "20",
                                          "terms.name_change_notice_hours": "48", "message": "A counter-offer."})
            await next_turn(seller, asked["seller"][-1])
            asked["seller"].append(await call_of(seller))
            return buyer_browser, seller_browser, buyer, seller

        loop = asyncio.new_event_loop()
        buyer_browser, seller_browser, buyer, seller = loop.run_until_complete(before_kill())
        first.kill()  # SIGKILL, while the seller's second turn waits
        for page in (buyer, seller):
            loop.run_until_complete(page.phase("offline"))  # each page saw its server go
        seats = json.loads((folder / "seats.json").read_text())
        released(seats["port"])
        second = Sweep(tmp_path, "seat_pair", folder, env)

        async def after_restart() -> None:
            await second.seats()
            again = await turn_of(seller)  # the same page, reconnected: the same turn, still open
            assert again == asked["seller"][-1]
            call = await answer(seller, "ACCEPT", {"message": "Accepted."})
            assert call == again
            for page in (buyer, seller):
                await page.phase("over")
                assert "an agreement was reached" in await page.text("note")
            for mine, theirs, role in ((buyer, seller, "seller"), (seller, buyer, "buyer")):
                private = (await theirs.text("brief")).split("\n")[0]  # the other's brief: who they speak for
                assert private.startswith("You negotiate for ")
                bodies = await mine.bodies()
                assert bodies and not [url for url, body in bodies if private in readable(body)], role
                token = seats_token(folder, role)
                assert not [url for url, body in bodies if token in url or token in body], role

        loop.run_until_complete(after_restart())
        for browser in (buyer_browser, seller_browser):
            loop.run_until_complete(browser.__aexit__(None, None, None))
        loop.close()
        assert second.wait() == 0, second.output
    finally:
        first.kill()
        if second is not None:
            second.kill()
    calls = pl.read_parquet(folder / "calls.parquet").sort("call_id")
    assert calls["call_id"].str.slice(-3).to_list() == ["k01", "k02", "k03"]  # every move once, none lost
    assert calls["provider"].unique().to_list() == ["human"]
    assert calls["resumed"].to_list() == [True, True, False]  # the moves before the kill replayed, not asked again
    journaled = [e.call_id for e in read_call_lines(folder)]
    assert sorted(journaled) == sorted(set(journaled))  # no turn answered twice
    tokens = [s["token"] for s in json.loads((folder / "seats.json").read_text())["seats"]]
    logs = first.output + second.output + ray_logs()
    assert not [t for t in tokens if t in logs]  # no token in the drivers' output or the cluster's logs
    stored = b"".join(p.read_bytes() for p in folder.rglob("*") if p.is_file() and p.name != "seats.json")
    assert b"HeadlessChrome" not in stored  # nothing of the people's browsers is stored


def readable(body: str) -> str:
    """A response as text: a JSON body's every string, decoded; any other body as it is."""
    try:
        data = json.loads(body)
    except ValueError:
        return body
    out: list[str] = []

    def walk(value: object) -> None:
        if isinstance(value, str):
            out.append(value)
        elif isinstance(value, dict):
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    walk(data)
    return "\n".join(out)


def seats_token(folder: Path, role: str) -> str:
    return next(s["token"] for s in json.loads((folder / "seats.json").read_text())["seats"] if s["role"] == role)


def ray_logs() -> str:
    """Every log file of the test session's Ray (the sweeps' drivers joined it)."""
    root = Path(ray._private.worker._global_node.get_logs_dir_path())
    return "".join(p.read_text(errors="replace") for p in root.rglob("*") if p.is_file())
