"""The live view of running sweeps: an aiohttp server on 127.0.0.1 whose page polls a JSON endpoint.

It reads the folders through the store and never writes them. Each sweep is followed by a
``Follower`` that reads only what its journals gained since the last poll (``tail_lines``), so a
poll costs the new lines, not the whole journal; memory holds one small entry per unit (its cell
and status) and the last few games and errors. The limiter's state comes from ``limiter.json``,
which the driver rewrites every few seconds (the limiter is a Ray actor in the driver's cluster,
out of this process's reach); 429s are counted from the call journal's ``attempt_errors``, which
outlive the driver.
"""

from __future__ import annotations

import json
import time
from collections import Counter, deque
from pathlib import Path
from typing import Any

from aiohttp import web
from pydantic import BaseModel

from bargain_ray.analysis.html import CSS, deal_line
from bargain_ray.core.records import GameRecord
from bargain_ray.store import CALLS_JOURNAL, JOURNAL, MANIFEST, lock_holder, read_manifest, read_progress, record_of
from bargain_ray.store.rows import game_row
from bargain_ray.store.status import LimiterSnapshot, State, is_429, read_limiter, read_status, tail_lines

LATEST = 8
"""Finished games shown with their transcript, newest first."""
ERRORS = 12
"""Latest errors shown (failed games and failed call attempts)."""
RATE_WINDOW_S = 60.0
"""Calls journaled within this many seconds make the rate in use."""
POLL_MS = 1500


class CellRow(BaseModel):
    cell: str
    finished: int
    agreements: int
    failures: int
    """Games that ended in a format failure or a technical error."""


class ModelSpend(BaseModel):
    model: str
    calls: int
    cost_usd: float
    rate_limited: int
    """HTTP 429 answers among the calls' attempts."""


class Snapshot(BaseModel):
    """What the page shows of one sweep."""

    name: str
    simulated: bool
    note: str | None
    units: int | None
    finished: int
    known: int
    running: bool
    state: State | None
    """``read_status``'s word: ``stopped`` when the status says running but no driver holds the folder."""
    cells: list[CellRow]
    spend: list[ModelSpend]
    calls_last_minute: int
    limiter: LimiterSnapshot | None
    errors: list[dict[str, Any]]
    latest: list[dict[str, Any]]


def transcript_of(rec: GameRecord) -> dict[str, Any]:
    """A finished game as the page lists it: header (cell, models, status, deal and gains) and its turns."""
    unit = rec.unit
    turns = []
    for t in rec.turns:
        fields = dict(t.fields)
        message = fields.pop("message", None)
        action = {k: v for k, v in fields.items() if v not in (None, False)
                  and not any(p in k.lower() for p in ("private", "scratchpad", "reasoning"))}
        turns.append({"turn": t.turn, "role": t.role, "message": message, "action": action})
    return {"unit_id": unit.unit_id, "cell": unit.cell, "status": rec.outcome.status.value,
            "models": unit.models_by_role, "deal": deal_line(game_row(rec)), "turns": turns}


class Follower:
    """One sweep folder followed by byte offsets into its two journals."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offsets = {JOURNAL: 0, CALLS_JOURNAL: 0}
        self.units: dict[str, tuple[str, str]] = {}
        """unit_id -> (cell, status) of its latest record."""
        self.spend: dict[str, list[float]] = {}
        """model -> [calls, cost, 429s]."""
        self.arrivals: deque[float] = deque()
        self.errors: deque[dict[str, Any]] = deque(maxlen=ERRORS)
        self.latest: deque[GameRecord] = deque(maxlen=LATEST)
        self.started = False

    def _read(self, name: str) -> list[dict[str, Any]]:
        lines, self.offsets[name] = tail_lines(self.path / name, self.offsets[name])
        return lines

    def poll(self) -> None:
        """Read what the journals gained (in bounded steps until caught up)."""
        while games := self._read(JOURNAL):
            for line in games:
                rec = record_of(line)
                unit, out = rec.unit, rec.outcome
                self.units[unit.unit_id] = (unit.cell, out.status.value)
                if not out.known:
                    self.errors.append({"unit_id": unit.unit_id, "what": "game unknown", "error": out.reason})
                self.latest.append(rec)
        now = time.monotonic()
        while calls := self._read(CALLS_JOURNAL):
            for entry in calls:
                reply = entry.get("reply")
                if not isinstance(reply, dict):
                    continue  # a void or a spend entry (``store.calls``): no reply of its own
                errors = [str(e) for e in reply.get("attempt_errors") or []]
                row = self.spend.setdefault(str(reply.get("model")), [0, 0.0, 0])
                row[0] += 1
                row[1] += float(reply.get("cost_usd") or 0.0)
                row[2] += sum(map(is_429, errors))
                for e in errors:
                    self.errors.append({"unit_id": entry.get("unit_id"), "what": f"attempt on {reply.get('model')}",
                                        "error": e})
                if self.started:  # lines read at the first poll arrived before the view started: no time
                    self.arrivals.append(now)
        self.started = True
        while self.arrivals and now - self.arrivals[0] > RATE_WINDOW_S:
            self.arrivals.popleft()

    def snapshot(self) -> Snapshot:
        self.poll()
        manifest = read_manifest(self.path)
        progress = read_progress(self.path)
        cells: dict[str, Counter[str]] = {}
        for cell, status in self.units.values():
            cells.setdefault(cell, Counter())[status] += 1
        return Snapshot(
            name=manifest.grid or self.path.name,
            simulated=manifest.config.provider == "sim",
            note=progress.note(), units=progress.units, finished=len(self.units), known=progress.known,
            running=progress.running is not None, state=progress.state,
            cells=[CellRow(cell=c, finished=sum(n.values()), agreements=n["AGREEMENT"],
                           failures=n["FORMAT_FAILURE"] + n["TECHNICAL_ERROR"]) for c, n in sorted(cells.items())],
            spend=[ModelSpend(model=m, calls=int(v[0]), cost_usd=v[1], rate_limited=int(v[2]))
                   for m, v in sorted(self.spend.items())],
            calls_last_minute=len(self.arrivals),
            limiter=read_limiter(self.path),
            errors=list(reversed(self.errors)),
            latest=[transcript_of(r) for r in reversed(self.latest)],
        )


def list_sweeps(root: Path) -> list[dict[str, Any]]:
    """Every sweep folder directly under ``root`` (it holds a manifest), newest first: from its status
    file and lock only, so listing many large sweeps reads no journal."""
    if not root.is_dir():
        return []
    folders = sorted((p for p in root.iterdir() if (p / MANIFEST).exists()), key=lambda p: -p.stat().st_mtime)
    out = []
    for p in folders:
        status = read_status(p)
        out.append({"name": p.name, "units": status.units if status else None,
                    "state": "running" if lock_holder(p) else status.state if status else "unknown"})
    return out


PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>bargain_ray live view</title>
<style>{css} .bar{{background:#e5e7eb;height:8px;width:160px;display:inline-block}}
.bar i{{background:#2563eb;height:8px;display:block}}</style></head><body>
<h1>bargain_ray live view</h1><p class="meta" id="updated"></p><div id="sweeps"></div><div id="sweep"></div>
<script>
var sweep = {sweep};
function el(tag, text, cls){{var e=document.createElement(tag); if(text!==undefined) e.textContent=text;
  if(cls) e.className=cls; return e;}}
function table(cols, rows){{var t=el("table"), h=el("tr"); cols.forEach(function(c){{h.appendChild(el("th", c));}});
  t.appendChild(h); rows.forEach(function(r){{var tr=el("tr"); r.forEach(function(v){{tr.appendChild(el("td",
  v===null||v===undefined?"":String(v)));}}); t.appendChild(tr);}}); return t;}}
function section(root, title){{root.appendChild(el("h2", title));}}
function showSweeps(list){{
  var root=document.getElementById("sweeps"); root.replaceChildren(); section(root, "Sweeps");
  var ul=el("ul"); list.forEach(function(s){{var li=el("li"), a=el("a", s.name); a.href="?sweep="+encodeURIComponent(s.name);
    li.appendChild(a); li.appendChild(document.createTextNode(" " + (s.units===null?"?":s.units) + " units, " +
    s.state)); ul.appendChild(li);}});
  root.appendChild(ul);
}}
function showSweep(s){{
  var root=document.getElementById("sweep"); root.replaceChildren();
  section(root, "Sweep " + s.name + (s.running ? " (running)" : s.state ? " (" + s.state + ")" : ""));
  var p=el("p"); p.id="finished"; p.dataset.finished=s.finished;
  p.textContent="finished games: " + s.finished + " of " + (s.units===null?"?":s.units) + " units (" + s.known + " known)";
  root.appendChild(p); if(s.note) root.appendChild(el("div", s.note, "technical"));
  section(root, "Progress by cell");
  root.appendChild(table(["cell","finished","agreements","failures"],
    s.cells.map(function(c){{return [c.cell,c.finished,c.agreements,c.failures];}})));
  section(root, "Spend by model" + (s.simulated ? " (simulated costs: provider=sim)" : ""));
  root.appendChild(table(["model","calls","cost_usd" + (s.simulated ? " (simulated)" : ""),"429s"],
    s.spend.map(function(m){{return [m.model,m.calls,m.cost_usd.toFixed(4),m.rate_limited];}})));
  section(root, "Rate limiter");
  root.appendChild(el("p", "calls journaled in the last minute: " + s.calls_last_minute, "meta"));
  if(s.limiter){{root.appendChild(el("p", "as the driver saw it at " + s.limiter.at, "meta"));
    root.appendChild(table(["key","window","slow start","in flight","waiting","paused for s","paces per minute"],
      s.limiter.keys.map(function(k){{return [k.key,k.window,k.slow_start,k.in_flight,k.waiting,k.paused_for_s.toFixed(1),
      Object.entries(k.paces).map(function(e){{return e[0]+" "+Math.round(e[1]);}}).join(", ")];}})));}}
  else root.appendChild(el("p", "no limiter state recorded (no model calls yet, or no LLM in this sweep)", "meta"));
  section(root, "Latest errors");
  root.appendChild(table(["unit","what","error"], s.errors.map(function(e){{return [e.unit_id,e.what,e.error];}})));
  section(root, "Latest games");
  s.latest.forEach(function(g){{
    var d=el("details"); d.className="game"; var sum=el("summary");
    sum.textContent=g.unit_id + " · " + g.cell + " · " + Object.entries(g.models).map(function(e){{return e[0]+": "+e[1];}})
      .join(", ") + " · " + g.status + " · " + g.deal; d.appendChild(sum);
    g.turns.forEach(function(t){{var div=el("div", undefined, "turn"); div.appendChild(el("h4", "Turn "+t.turn+" · "+t.role));
      if(t.message!==null) div.appendChild(el("p", t.message));
      div.appendChild(el("pre", JSON.stringify(t.action))); d.appendChild(div);}});
    root.appendChild(d);
  }});
}}
var polls=0;
function refresh(){{
  if(polls++ % 10 === 0) fetch("api/sweeps").then(function(r){{return r.json();}}).then(showSweeps);
  if(sweep) fetch("api/sweep?name=" + encodeURIComponent(sweep)).then(function(r){{return r.json();}}).then(function(s){{
    showSweep(s); document.getElementById("updated").textContent="updated " + new Date().toISOString();}});
}}
refresh(); setInterval(refresh, {poll});
</script></body></html>"""


def make_app(root: Path, default: str | None = None) -> web.Application:
    """The server: ``/`` (the page; ``?sweep=NAME`` shows one), ``/api/sweeps``, ``/api/sweep?name=NAME``."""
    followers: dict[str, Follower] = {}

    def folder(name: str) -> Path:
        path = (root / name).resolve()
        if path.parent != root.resolve() or not (path / MANIFEST).exists():
            raise web.HTTPNotFound(text=f"no sweep {name!r} under {root}")
        return path

    async def page(request: web.Request) -> web.Response:
        name = request.query.get("sweep") or default
        return web.Response(text=PAGE.format(css=CSS, sweep=json.dumps(name), poll=POLL_MS), content_type="text/html")

    async def sweeps(request: web.Request) -> web.Response:
        return web.json_response(list_sweeps(root))

    async def sweep(request: web.Request) -> web.Response:
        name = request.query.get("name", "")
        path = folder(name)
        follower = followers.setdefault(name, Follower(path))
        return web.Response(text=follower.snapshot().model_dump_json(), content_type="application/json")

    app = web.Application()
    app.add_routes([web.get("/", page), web.get("/api/sweeps", sweeps), web.get("/api/sweep", sweep)])
    return app
