"""The seat desk and server without a browser or Ray: each family's form makes a reply its engine reads, a form is
never part of a request or its journal key, a turn is answered once, a turn limit ends a game only for a person who
came, the server's answers say nothing about other seats, and a person plays a strategy agent through the loop."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient, TestServer
from helpers import game_config

from bargain_ray.agents.human import Answer, HumanAgent, seat_id
from bargain_ray.agents.strategy import StrategyAgent
from bargain_ray.core.errors import FailureKind, TechnicalFailure
from bargain_ray.core.records import utc_now
from bargain_ray.core.status import Status
from bargain_ray.core.unit import Unit
from bargain_ray.execution.calljournal import prompt_key
from bargain_ray.games import load_game
from bargain_ray.play.loop import play
from bargain_ray.seats.desk import SeatDesk
from bargain_ray.seats.server import make_app
from bargain_ray.store.seats import SEATS, open_seats, read_seats, write_seats

FAMILIES = ["tickets", "bargaining", "scorable6", "orange"]


def typed(field) -> str:
    """What a person types in a field that should be accepted."""
    if field.kind == "choice":
        return field.options[0]
    if field.kind == "flag":
        return "false"
    if field.kind == "number":
        return "50" if field.minimum is None else str(field.minimum)
    return "I would like a fair deal. Let us talk."


@pytest.mark.parametrize("name", FAMILIES)
def test_every_move_a_form_offers_makes_a_reply_its_engine_reads(name):
    """Each family's forms over a game its strategy plays: every move of every turn, filled as a person would,
    is a reply the engine accepts (the observer's verdict too: a person may take any role)."""
    game = load_game(game_config(name))
    state = game.start(5, None)
    checked = 0
    while (role := game.to_move(state)) is not None and checked < 40:
        prompt = game.prompt(state, role)
        assert prompt.form is not None and prompt.form.moves, (name, role)
        action = None
        for i, move in enumerate(prompt.form.moves):
            values = {".".join(f.path): typed(f) for f in move.fields}
            if name == "orange" and role == "observer":
                values |= {"agreement_reached": "false", "allocation_type": "none"}
            action = game.parse(state, role, prompt.form.reply(i, values))
            checked += 1
        state = game.apply(state, role, action)
    assert checked >= 3


def test_a_form_is_never_sent_nor_keyed():
    """The form rides beside the prompt: the request as dumped, its journal key and its cost estimate are the same
    without it, so a model's requests and every resume key are what they were."""
    game = load_game(game_config("tickets"))
    prompt = game.prompt(game.start(0, None), "buyer")
    bare = prompt.model_copy(update={"form": None})
    assert prompt.form is not None and "form" not in prompt.model_dump()
    assert prompt_key(prompt) == prompt_key(bare) and prompt.model_dump_json() == bare.model_dump_json()


def test_a_number_is_sent_as_typed_and_a_word_in_its_place_meets_the_rule():
    game = load_game(game_config("tickets"))
    state = game.start(0, None)
    form = game.prompt(state, "buyer").form
    terms = {"terms.unit_price_usd": "72.50", "terms.cancellation_fee_pct": "abc", "terms.name_change_notice_hours": "1"}
    reply = form.reply(0, terms | {"message": 'He said "</script>"'})
    assert '"unit_price_usd": 72.50' in reply and '"cancellation_fee_pct": "abc"' in reply
    assert json.loads(reply)["message"] == 'He said "</script>"'
    with pytest.raises(Exception, match="cancellation_fee_pct must be a number"):
        game.parse(state, "buyer", reply)


def desk_of(tmp_path: Path, limit_s: float | None = None, seats: int = 2) -> SeatDesk:
    wanted = [(seat_id(f"u{i}", "buyer"), f"u{i}", "buyer", "tickets") for i in range(seats)]
    file = open_seats(tmp_path, "127.0.0.1", 0, wanted)
    write_seats(tmp_path, file)
    return SeatDesk(file, lambda f: write_seats(tmp_path, f), limit_s)


def test_a_turn_is_answered_once_and_only_through_its_own_call(tmp_path):
    async def go() -> None:
        desk = desk_of(tmp_path)
        game = load_game(game_config("tickets"))
        prompt = game.prompt(game.start(0, None), "buyer")
        token = desk.file.seats[0].token
        asked = asyncio.ensure_future(desk.ask("u0:buyer", "u0-k01", prompt))
        await asyncio.sleep(0)  # the ask is registered
        view = desk.view(token)
        assert view.phase == "your_turn" and view.call == "u0-k01" and view.brief == prompt.system
        assert desk.answer(token, "u0-k02", 2, {}) is not None  # not this turn's call
        values = {"message": "We pass."}
        assert desk.answer(token, "u0-k01", 1, values) is None
        assert desk.answer(token, "u0-k01", 1, values) is not None  # never twice
        answer = await asked
        assert json.loads(answer.text)["action"] == "NONE" and answer.shown_at is not None
        assert desk.view(token).phase == "waiting"
        desk.end("u0:buyer", Status.AGREEMENT)
        assert desk.view(token).phase == "over" and read_seats(tmp_path).seats[0].state == "done"
    asyncio.run(go())


def test_a_turn_limit_ends_a_game_only_for_a_person_who_came(tmp_path):
    """The limit runs from the page showing the turn: a seat nobody opened keeps waiting (never scored as a
    disagreement); one whose person left lets the game end unknown, its failure saying so."""
    async def go() -> None:
        desk = desk_of(tmp_path, limit_s=0.05)
        prompt = load_game(game_config("tickets")).prompt(load_game(game_config("tickets")).start(0, None), "buyer")
        nobody = asyncio.ensure_future(desk.ask("u1:buyer", "u1-k01", prompt))
        left = asyncio.ensure_future(desk.ask("u0:buyer", "u0-k01", prompt))
        await asyncio.sleep(0)
        desk.view(desk.file.seats[0].token)  # the person of seat 0 saw the turn, then left
        answer = await left
        assert answer.text is None
        done, _ = await asyncio.wait({nobody}, timeout=0.5)
        assert not done and desk.view(desk.file.seats[1].token).phase == "your_turn"
        nobody.cancel()
        agent = HumanAgent(FixedDesk(answer), "u0:buyer", "human")
        with pytest.raises(TechnicalFailure) as failed:
            await agent.act(prompt, "u0-k01")
        assert failed.value.failure.kind == FailureKind.ABSENT
    asyncio.run(go())


async def accept_on_the_second_turn(desk: SeatDesk, token: str) -> None:
    """A person at ``token``'s page: an offer of every term's least on their first turn, then the other side's
    standing offer accepted."""
    version, answered = -1, 0
    while answered < 2:
        await desk.changed(token, version)
        view = desk.view(token)
        version = view.version
        if view.phase != "your_turn":
            continue
        labels = [m.label for m in view.form.moves]
        if answered:
            move, values = next(i for i, label in enumerate(labels) if label.startswith("ACCEPT")), {}
        else:
            move = labels.index("OFFER")
            values = {".".join(f.path): typed(f) for f in view.form.moves[move].fields}
        assert desk.answer(token, view.call, move, values) is None
        answered += 1


def test_a_person_plays_a_strategy_agent_through_the_game_loop(tmp_path):
    """The loop plays a person's seat beside a strategy agent's as it plays two models: the person's turns are
    calls of provider human, the agent's its own, and the game ends with the agreement the person accepted."""
    async def go() -> None:
        desk = desk_of(tmp_path, seats=1)
        game = load_game(game_config("tickets"))
        family = game.config.family
        agents = {"buyer": HumanAgent(desk, seat_id("u0", "buyer"), "human"),
                  "seller": StrategyAgent("boulware", {"kind": "boulware"}, family)}
        person = asyncio.ensure_future(accept_on_the_second_turn(desk, desk.file.seats[0].token))
        record = await play(game, agents, Unit.for_replay("tickets", family, 5, first_speaker="seller", unit_id="u0"))
        await person
        assert record.outcome.status == Status.AGREEMENT
        assert [c.provider for c in record.calls] == ["strategy", "human", "strategy", "human"]
        assert [t.role for t in record.turns] == ["seller", "buyer", "seller", "buyer"]
    asyncio.run(go())


class FixedDesk:
    def __init__(self, answer: Answer) -> None:
        self.answer = answer

    async def ask(self, seat: str, call_id: str, prompt) -> Answer:
        return self.answer


def test_a_person_s_reply_is_a_call_of_provider_human_that_costs_nothing():
    prompt = load_game(game_config("tickets")).prompt(load_game(game_config("tickets")).start(0, None), "buyer")
    now = utc_now()
    answer = Answer(text='{"action": "NONE"}', asked_at=now, shown_at=now, answered_at=now)
    reply = asyncio.run(HumanAgent(FixedDesk(answer), "s", "human").act(prompt, "u-k01"))
    assert (reply.provider, reply.model, reply.cost_usd, reply.usage.input_tokens) == ("human", "human", 0.0, 0)
    assert reply.request == {"system": prompt.system, "messages": [m.model_dump() for m in prompt.messages]}


def test_the_server_answers_a_seat_s_token_with_its_own_view_only(tmp_path):
    async def go() -> None:
        desk = desk_of(tmp_path, seats=3)
        game = load_game(game_config("tickets"))
        seller = game.prompt(game.start(0, None), "seller")
        other = asyncio.ensure_future(desk.ask("u1:buyer", "u1-k01", seller))
        async with TestClient(TestServer(make_app(desk))) as client:
            assert (await client.get("/s/not-a-token")).status == 404
            mine = desk.file.seats[0].token
            page = await client.get(f"/s/{mine}")
            assert "script-src 'self'" in page.headers["Content-Security-Policy"]
            assert page.headers["Referrer-Policy"] == "no-referrer"
            body = await (await client.get(f"/s/{mine}/view?since=-1")).text()
            assert seller.system.split("\n")[0] not in body and desk.file.seats[1].token not in body
            joined = [(await client.post("/join", allow_redirects=False)).headers.get("Location") for _ in range(3)]
            # the lobby hands out the seats nobody has come to yet (seat 0's person came by its own link), in order
            assert joined == [*(f"/s/{s.token}" for s in desk.file.seats[1:]), None]
            assert "No seat is free now" in await (await client.post("/join")).text()
        other.cancel()
    asyncio.run(go())


def test_seats_json_is_its_owner_s_alone_and_keeps_tokens_across_runs(tmp_path):
    desk_of(tmp_path)
    first = read_seats(tmp_path)
    assert (tmp_path / SEATS).stat().st_mode & 0o077 == 0
    again = open_seats(tmp_path, "127.0.0.1", 0, [(s.seat, s.unit_id, s.role, s.game) for s in first.seats])
    assert [s.token for s in again.seats] == [s.token for s in first.seats]
    assert len({s.token for s in first.seats}) == 2 and all(len(s.token) >= 24 for s in first.seats)
    assert "token" not in first.board().model_dump_json()



def test_a_seat_page_that_cannot_be_served_is_one_line_before_ray_and_any_call(tmp_path):
    """A port another program holds: the run stops at its plan, before Ray starts and before any call, saying how
    to go on; a turn limit out of its bounds is refused with the config's errors."""
    with socket.create_server(("127.0.0.1", 0)) as busy:
        port = busy.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "bargain_ray", "+grid=human_pilot", "provider=sim", f"run.seats.port={port}",
             f"run.dir={tmp_path / 'pilot'}"], capture_output=True, text=True, timeout=300,
            env={k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"})
    assert done.returncode == 1, done.stdout + done.stderr
    last = (done.stdout + done.stderr).strip().splitlines()[-1]
    assert last.startswith(f"error: cannot serve the seat page on 127.0.0.1:{port}: ") and "run.seats.port=" in last
    assert "ray:" not in done.stdout and "Traceback" not in done.stderr
    assert not (tmp_path / "pilot" / "calls.journal.jsonl").exists()
    limit = subprocess.run([sys.executable, "-m", "bargain_ray", "+grid=human_pilot", "run.seats.turn_limit_s=0",
                            f"run.dir={tmp_path / 'pilot'}"], capture_output=True, text=True, timeout=300)
    assert limit.returncode == 1 and "run.seats.turn_limit_s" in limit.stderr + limit.stdout
