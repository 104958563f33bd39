"""The human_pilot grid played in-process (strategy agents in the model seats, a scripted person at the seat desk),
its tables, dataset and report: each role a person played is marked, and the report shows the person arms apart
from the model arms with person - model contrasts on the seeds both played."""

from __future__ import annotations

import asyncio
import json
import re
from itertools import count
from pathlib import Path

import polars as pl

from bargain_ray.agents.human import Answer
from bargain_ray.analysis.report import build_report
from bargain_ray.analysis.view import Follower
from bargain_ray.config import compose_dict
from bargain_ray.core.prompt import Prompt
from bargain_ray.core.records import utc_now
from bargain_ray.design import resolve, units
from bargain_ray.execution.plan import describe
from bargain_ray.execution.worker import GameRunner
from bargain_ray.store import GameJournal, open_manifest, write_status, write_tables
from bargain_ray.store.seats import open_seats, write_seats

PILOT = ("+grid=human_pilot", "model@models.M=linear", "model@models.O=rule-observer", "grid.blocks=3")
"""The pilot with strategy agents in its model seats, three blocks (three seeds: intervals have width)."""


class ScriptedPerson:
    """A seat desk whose person fills each turn's form: tickets, an offer in the middle of every range until turn 4,
    then the other side's standing offer accepted; free text, a proposal to split by parts."""

    def __init__(self) -> None:
        self.turns = count(1)

    async def ask(self, seat: str, call_id: str, prompt: Prompt) -> Answer:
        form = prompt.form
        assert form is not None
        labels = [m.label for m in form.moves]
        accept = next((i for i, label in enumerate(labels) if label.startswith("ACCEPT")), None)
        if accept is not None and (next(self.turns) > 3 or "final reply" in prompt.messages[-1].content):
            text = form.reply(accept, {"message": "We accept."})
        elif labels == ["Send"]:
            text = form.reply(0, {"message": "I need my part of it. You take all of the peel and I take all of the "
                                             "juice. Do we agree?"})
        else:
            move = labels.index("OFFER") if "OFFER" in labels else 0
            values = {".".join(f.path): str((f.minimum + f.maximum) / 2) if f.kind == "number" else "Fair terms."
                      for f in form.moves[move].fields}
            text = form.reply(move, values)
        now = utc_now()
        return Answer(text=text, asked_at=now, shown_at=now, answered_at=now)

    async def end(self, seat: str, status: object) -> None:
        return None


def play_pilot(path: Path) -> None:
    sweep = resolve(compose_dict("config", list(PILOT)))
    manifest = open_manifest(path, describe(sweep, "20261201"))
    runner = GameRunner(sweep.model_dump(mode="json"))
    runner.desk = ScriptedPerson()

    async def play_all():
        return await asyncio.gather(*(runner.play(u) for u in units(sweep, manifest.created)))

    journal = GameJournal(path)
    journal.append_many(asyncio.run(play_all()))
    journal.close()
    write_status(path, "ended", 24)
    write_tables(path)


def test_the_pilot_s_people_are_marked_and_reported_apart_from_the_models(tmp_path):
    folder = tmp_path / "human_pilot"
    folder.mkdir()
    play_pilot(folder)
    games = pl.read_parquet(folder / "games.parquet")
    tickets = games.filter(pl.col("game") == "tickets")
    marked = {(r["pairing"], r["assignment"], r["buyer_human"], r["seller_human"]) for r in tickets.iter_rows(named=True)}
    assert marked == {("PM", 1, True, None), ("PM", 2, None, True), ("MM", 1, None, None)}
    assert games.filter(pl.col("pairing") == "PMO")["party_a_human"].to_list().count(True) == 3
    calls = pl.read_parquet(folder / "calls.parquet")
    assert set(calls.filter(pl.col("provider") == "human")["model"]) == {"human"}
    build_report(folder)
    page = (folder / "report.html").read_text()
    people = page.split('id="family-multi_issue-people"')[1].split("<h3")[0]
    assert ">person</td>" in people and ">linear</td>" in people
    contrast = people.split("person − linear")[1].split("</tr>")[0]  # the pilot's few seeds: an estimate, no interval
    assert re.search(r"-?[\d.]+ \(n=\d seeds?, fewer than 10: no CI\)", contrast), contrast
    assert 'id="family-freetext-people"' in page
    card = (folder / "dataset" / "README.md").read_text()
    assert "_human" in card and "human seat" in card
    assert json.loads((folder / "manifest.json").read_text())["config"]["models"]["P"]["provider"] == "human"


def test_the_live_view_shows_the_seat_page_and_its_seats_without_a_token(tmp_path):
    folder = tmp_path / "human_pilot"
    folder.mkdir()
    play_pilot(folder)
    units_played = pl.read_parquet(folder / "games.parquet")
    wanted = [(f"{u}:buyer", u, "buyer", "tickets") for u in units_played.filter(pl.col("pairing") == "PM")["unit_id"]]
    seats = open_seats(folder, "127.0.0.1", 8765, wanted)
    seats.seats[0].state, seats.seats[1].state = "done", "playing"
    write_seats(folder, seats)
    shown = Follower(folder).snapshot()
    assert shown.seats is not None and (shown.seats.waiting, shown.seats.playing, shown.seats.done) == (4, 1, 1)
    assert shown.seats.url == "http://127.0.0.1:8765/"
    page = shown.model_dump_json()
    assert not [s.token for s in seats.seats if s.token in page]
