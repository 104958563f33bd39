"""The seat server: the lobby, each seat's page and the two requests its script makes, over one ``SeatDesk``.

Routes: ``/`` the lobby, ``POST /join`` hands the next free seat (303 to its page), ``/s/<token>`` a seat's page,
``/s/<token>/view?since=N`` its view once it changed past version N (a long-poll), ``POST /s/<token>/answer`` the
person's reply. An unknown token is a 404 that says nothing more. No access log is kept (a seat's link is its key),
and no request's address or headers are read.
"""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from bargain_ray.seats.desk import SeatDesk, json_of
from bargain_ray.seats.page import CSS, FULL_HTML, HEADERS, LOBBY_HTML, SCRIPT, SEAT_HTML

MAX_BODY = 256 * 1024
"""The largest answer a page may post (ours: far above any reply a form makes)."""

DESK: web.AppKey[SeatDesk] = web.AppKey("desk", SeatDesk)


@web.middleware
async def _headers(request: web.Request, handler: Any) -> web.StreamResponse:
    try:
        response = await handler(request)
    except web.HTTPException as exc:
        exc.headers.update(HEADERS)
        raise
    response.headers.update(HEADERS)
    return response


def _html(text: str) -> web.Response:
    return web.Response(text=text, content_type="text/html")


def _desk_and_token(request: web.Request) -> tuple[SeatDesk, str]:
    desk, token = request.app[DESK], request.match_info["token"]
    if desk.seat_of(token) is None:
        raise web.HTTPNotFound(text="no such seat")
    return desk, token


async def lobby(request: web.Request) -> web.Response:
    return _html(LOBBY_HTML)


async def join(request: web.Request) -> web.Response:
    seat = request.app[DESK].hand_out()
    if seat is None:
        return _html(FULL_HTML)
    raise web.HTTPSeeOther(f"/s/{seat.token}")


async def seat_page(request: web.Request) -> web.Response:
    _desk_and_token(request)
    return _html(SEAT_HTML)


async def view(request: web.Request) -> web.Response:
    desk, token = _desk_and_token(request)
    try:
        since = int(request.query.get("since", "-1"))
    except ValueError:
        since = -1
    await desk.changed(token, since)
    return web.json_response(json_of(desk.view(token)))


async def answer(request: web.Request) -> web.Response:
    desk, token = _desk_and_token(request)
    try:
        body = json.loads(await request.read())
        call, move, values = str(body["call"]), int(body["move"]), body["values"]
        values = {str(k): str(v) for k, v in values.items()}
    except (ValueError, KeyError, TypeError, AttributeError):
        return web.json_response({"error": "the answer could not be read: reload the page and send it again"},
                                 status=400)
    refused = desk.answer(token, call, move, values)
    return web.json_response({"error": refused} if refused else {"ok": True}, status=409 if refused else 200)


async def script(request: web.Request) -> web.Response:
    return web.Response(text=SCRIPT, content_type="application/javascript")


async def style(request: web.Request) -> web.Response:
    return web.Response(text=CSS, content_type="text/css")


def make_app(desk: SeatDesk) -> web.Application:
    app = web.Application(middlewares=[_headers], client_max_size=MAX_BODY)
    app[DESK] = desk
    app.add_routes([
        web.get("/", lobby), web.post("/join", join), web.get("/seat.js", script), web.get("/seat.css", style),
        web.get("/s/{token}", seat_page), web.get("/s/{token}/view", view), web.post("/s/{token}/answer", answer),
    ])
    return app


async def serve(desk: SeatDesk, host: str, port: int) -> web.AppRunner:
    """Serve ``desk`` on ``host:port`` (no access log); the caller cleans the runner up."""
    runner = web.AppRunner(make_app(desk), access_log=None)
    await runner.setup()
    await web.TCPSite(runner, host, port).start()
    return runner
