"""A person plays a whole game through the seat page in headless Chromium, against the simulated provider, in each
kind of family: the tickets (contract terms) as the buyer, the orange (free text) as party A, bargaining as the
buyer; each with a reply that breaks a rule on the way (its repair shown on the page, the corrected reply
accepted). The sweep's tables then hold the person's game with the shape of a model game's, played beside it.

Set ``BARGAIN_RAY_SEAT_SHOT=docs/seat_page.png`` to keep the tickets page's screenshot (docs/human_seat.md shows it).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from collections.abc import Awaitable, Callable
from pathlib import Path

import polars as pl
import pytest
from cdp import Browser, Page
from seating import FAMILIES, Sweep, answer, environment, link, moves, next_turn, repaired, write_grid

from bargain_ray.store import read_call_lines
from bargain_ray.store.calls import CallEntry

pytestmark = pytest.mark.timeout(900)  # a cap for a loaded machine: each test waits on its pages' events

PROVIDER_ONLY = {"stop_reason", "request_id", "model_version", "served_by", "system_fingerprint", "drift"}
"""Call columns only a provider fills: what it reports about a request it served. A person's call has none."""


@pytest.fixture(scope="module")
def families(ray_session, tmp_path_factory):
    """One sweep with a human seat in each family (``PM``) beside the same game played by models (``MM``)."""
    cwd = tmp_path_factory.mktemp("seat_families")
    write_grid(cwd, "seat_families", FAMILIES)
    env = environment({k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")} | {"RAY_ADDRESS": ray_session})
    sweep = Sweep(cwd, "seat_families", cwd / "out", env)
    yield sweep
    sweep.kill()


async def play_tickets(page: Page, shot: Path) -> None:
    await page.phase("your_turn")
    terms = {"terms.unit_price_usd": "9999", "terms.cancellation_fee_pct": "10",
             "terms.name_change_notice_hours": "48", "message": "We can pay a fair price for forty tickets."}
    await answer(page, "OFFER", terms)
    await repaired(page, "unit_price_usd is 9999: it must be from 60.00 to 100.00.")
    await page.screenshot(shot)
    call = await answer(page, "OFFER", terms | {"terms.unit_price_usd": "72.50"})
    while await next_turn(page, call) != "over":
        accept = next((m for m in await moves(page) if m.startswith("ACCEPT")), None)
        call = await answer(page, accept or "NONE", {"message": "Agreed."})


async def play_bargaining(page: Page) -> None:
    await page.phase("your_turn")
    await answer(page, "offer", {"offer": "150", "stated_valuation": "60", "message": "Far too high."})
    await repaired(page, '"offer" is 150: a price must be from 0 to 100.')
    call = await answer(page, "offer", {"offer": "40", "stated_valuation": "55", "reasoning_private": "mine alone"})
    while await next_turn(page, call) != "over":
        accept = next((m for m in await moves(page) if m.startswith("accept")), None)
        call = await answer(page, accept or "offer", {"offer": "48"} if accept is None else {})


async def play_orange(page: Page) -> None:
    await page.phase("your_turn")
    await answer(page, "Send", {"message": "   "})
    await repaired(page, "Your message is empty: write 2 to 4 sentences to the other party.")
    call = await answer(page, "Send", {"message": "I need the juice for a promise to a friend. Here is my proposal: "
                                                  "you take all of the peel and I take all of the juice. Do we agree?"})
    while await next_turn(page, call) != "over":
        call = await answer(page, "Send", {"message": "Agreed, thank you. That settles it for me."})


def test_a_person_plays_the_tickets_as_the_buyer(families, tmp_path):
    async def go() -> None:
        seats = await families.seats()
        async with Browser(tmp_path / "profile") as browser:
            for seat in seats.seats[:2]:  # the lobby hands each arrival the next free seat, in the plan's order
                page = await browser.page(seats.url)
                await page.follow("join")
                assert await page.eval("location.href") == seats.link(seat)
            await page.goto(link(seats, "tickets", "buyer"))
            await play_tickets(page, tmp_path / "seat.png")
            assert "an agreement was reached" in await page.text("note")
    asyncio.run(go())
    assert (tmp_path / "seat.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    if target := os.environ.get("BARGAIN_RAY_SEAT_SHOT"):
        shutil.copy(tmp_path / "seat.png", target)


async def seated(families: Sweep, profile: Path, game: str, role: str, play: Callable[[Page], Awaitable[None]]) -> str:
    """A person plays ``role`` of the ``game`` seat by its own link; every response their page received, joined."""
    seats = await families.seats()
    async with Browser(profile) as browser:
        page = await browser.page(link(seats, game, role))
        await play(page)
        return "\n".join(body for _, body in await page.bodies())


def test_a_person_plays_the_orange_in_free_text(families, tmp_path):
    asyncio.run(seated(families, tmp_path / "profile", "orange", "party_a", play_orange))


def test_a_person_plays_bargaining_as_the_buyer(families, tmp_path):
    bodies = asyncio.run(seated(families, tmp_path / "profile", "bargaining", "buyer", play_bargaining))
    seller = [json.loads(e.reply.text)["reasoning_private"] for e in read_call_lines(families.folder)
              if isinstance(e, CallEntry) and e.unit_id in bodies and e.reply.provider == "sim"]
    assert seller and not [note for note in seller if note in bodies]  # the model's private notes never reach it


def person_role(game: str) -> str:
    return "party_a" if game == "orange" else "buyer"


def filled(frame: pl.DataFrame) -> set[str]:
    """The columns with a value in every row of ``frame``."""
    return {c for c in frame.columns if frame[c].null_count() == 0}


def test_the_people_s_games_have_the_rows_of_model_games(families):
    """After the three games the sweep ends on its own: each person's game is a known agreement whose games, turns
    and calls rows fill what the model game beside it fills (a call's provider-reported fields aside), the call
    rows being the person's replies: provider human, cost 0, the time they took, the prompt they were shown."""
    assert families.wait() == 0, families.output
    assert "human seats at http://127.0.0.1:" in families.output and "0 waiting, 0 playing, 3 done" in families.output
    folder = families.folder
    games, turns, calls = (pl.read_parquet(folder / f"{t}.parquet") for t in ("games", "turns", "calls"))
    for game in ("tickets", "bargaining", "orange"):
        person = games.filter((pl.col("game") == game) & pl.col("pairing").str.starts_with("P"))
        model = games.filter((pl.col("game") == game) & pl.col("pairing").str.starts_with("MM"))
        assert person["status"].to_list() == model["status"].to_list() == ["AGREEMENT"], game
        marks = {c for c in games.columns if c.endswith("_human")}  # the person's role is marked, a model's empty
        assert filled(person) - marks == filled(model) and person[f"{person_role(game)}_human"].item() is True, game
        unit, other = person["unit_id"].item(), model["unit_id"].item()
        moves = turns.filter(pl.col("valid")).with_columns(pl.col("action").fill_null("(message)"))
        mine, theirs = moves.filter(pl.col("unit_id") == unit), moves.filter(pl.col("unit_id") == other)
        common = set(mine["action"]) & set(theirs["action"])
        assert common, game
        for action in common:  # a move fills the same columns whoever made it
            assert filled(mine.filter(pl.col("action") == action)) == filled(
                theirs.filter(pl.col("action") == action)), (game, action)
        typed = calls.filter((pl.col("unit_id") == unit) & (pl.col("provider") == "human"))
        modelled = calls.filter((pl.col("unit_id") == other) & (pl.col("role") == typed["role"][0]))
        assert filled(typed) == filled(modelled) - PROVIDER_ONLY, game
        assert typed["valid"].to_list()[0] is False and typed["rule"][0] is not None  # the rule it broke, first
        assert typed["cost_usd"].sum() == 0 and typed["input_tokens"].sum() == 0 and typed["model"].unique().to_list() == ["human"]
        assert (typed["latency_s"] > 0).all() and typed["response_text"].str.len_chars().min() > 0
        for row in typed.iter_rows(named=True):
            request = json.loads(row["request"])
            assert set(request) == {"system", "messages"} and request["messages"][0]["role"] == "user"
