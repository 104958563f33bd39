"""The live view of sweeps: an aiohttp server on 127.0.0.1 whose page polls a JSON endpoint.

It reads the folders through the store and never writes them. Each sweep is followed by a ``Follower`` that
reads only what its journals gained since the last poll (``read_tail``), so a poll costs the new lines, not
the whole journal; memory holds one small entry per unit (its cell and status), the latest reply of each game
still running, and the last few games and errors. The limiter's state comes from ``limiter.json``, which the
driver rewrites every few seconds while it runs (the limiter is a Ray actor in the driver's cluster, out of this
process's reach); it is shown only while a driver holds the folder. What was paid (calls, tokens, dollars, 429s and
drift per ``provider:model``) is the call journal's, tallied by ``store.paid`` as the terminal tallies it, so it
outlives the driver and holds under ``run.journal_calls=false`` too. Rates come from the journals' own timestamps
(``event_time``).
"""

from __future__ import annotations

import re
from collections import Counter, deque
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from aiohttp import web
from pydantic import BaseModel, JsonValue

from bargain_ray.analysis.export import CARD_TABLES, EXTRA_TABLES
from bargain_ray.analysis.families import deal_line
from bargain_ray.analysis.page import CSS, escape, script_value
from bargain_ray.analysis.private import is_private, turn_parts
from bargain_ray.analysis.rehearsal import rehearsal, statement
from bargain_ray.analysis.transcript import shown_turns
from bargain_ray.clients.snapshot import LimiterSnapshot
from bargain_ray.core.records import GameRecord
from bargain_ray.games.base import RuleError
from bargain_ray.games.kit.replies import json_object
from bargain_ray.store import (
    CALLS_JOURNAL,
    DATASET,
    JOURNAL,
    MANIFEST,
    REPORT,
    lock_holder,
    read_manifest,
    read_progress,
)
from bargain_ray.store.calls import CallEntry
from bargain_ray.store.journal import parse_record
from bargain_ray.store.jsonl import CorruptJournal, read_tail
from bargain_ray.store.manifest import Manifest
from bargain_ray.store.paid import Drift, ModelSpend, SpendTail
from bargain_ray.store.rows import game_row
from bargain_ray.store.seats import SeatBoard, read_seats
from bargain_ray.store.sim_runs import read_reply_noise
from bargain_ray.store.status import State, read_limiter, read_status

LATEST = 8
"""Finished games shown with their transcript, newest first."""
ERRORS = 12
"""Latest errors shown (failed games and failed call attempts)."""
RUNNING = 20
"""Games in flight shown with their latest reply, the most recent first."""
RATE_WINDOW_S = 60.0
"""Calls (and games) within this many seconds of the latest make the rate in use."""
POLL_MS = 1500
Phase = Literal["planned", "running", "ended", "interrupted", "stopped", "unknown"]
"""``planned``: a manifest (a dry run wrote it) and nothing played; ``unknown``: games but no driver's status."""


def event_time(*times: datetime | None) -> float | None:
    """When a journal line's event happened (POSIX seconds): the first of its own ``times`` it records (latest
    event first), None when it records none. The caller falls back to the journal file's time when it read the line
    (``Follower``)."""
    return next((t.timestamp() for t in times if t is not None), None)


def planned_units(manifest: Manifest) -> int:
    """The units the manifest's design lays out: every cell of every design, once per block."""
    grid = manifest.config.grid
    return grid.blocks * sum(len(d.cell_labels()) for d in grid.designs)


class Window:
    """Times of events (POSIX seconds): the first, the latest, and those within ``RATE_WINDOW_S`` of the latest
    (journal lines come in about the order they happened, so the window is pruned from its old end)."""

    def __init__(self) -> None:
        self.first: float | None = None
        self.last: float | None = None
        self.recent: deque[float] = deque()

    def add(self, at: float) -> None:
        self.first = at if self.first is None else min(self.first, at)
        self.last = at if self.last is None else max(self.last, at)
        self.recent.append(at)
        while self.recent and self.recent[0] <= self.last - RATE_WINDOW_S:
            self.recent.popleft()

    def last_minute(self) -> int | None:
        return None if self.last is None else sum(1 for t in self.recent if t > self.last - RATE_WINDOW_S)


class DriftRow(BaseModel):
    """A model the provider served as another version than the sweep's reference (its first answer)."""

    model: str
    reference: str
    served: str
    calls: int
    first_call: str
    first_at: float | None
    """POSIX seconds of the first such answer, when the journal records it."""

    @classmethod
    def of(cls, drift: Drift) -> DriftRow:
        return cls(model=drift.model, reference=drift.reference.shown(), served=drift.served.shown(), calls=drift.calls,
                   first_call=drift.first_call, first_at=event_time(drift.first_at))


class CellRow(BaseModel):
    cell: str
    finished: int
    agreements: int
    failures: int
    """Games that ended in a format failure or a technical error."""


class Rates(BaseModel):
    """How fast the sweep goes, from the journals' times."""

    calls_last_minute: int | None
    """Calls answered within a minute of the latest one (None: no call has a time)."""
    games_last_minute: int | None
    timed_by: Literal["journal", "file", "none"]
    """``journal``: the lines' own timestamps; ``file``: the call journal's modification time when the view read
    each line (lines written before the view started have none); ``none``: no line has a time yet."""
    first_s: float | None
    last_s: float | None
    """POSIX seconds of the first and latest timed call."""


class ShownTurn(BaseModel):
    """A turn (or a running game's latest reply) as the page shows it: its public part and, apart and marked,
    what only its speaker saw."""

    turn: int | None
    role: str | None
    model: str | None
    call_id: str | None
    message: str | None
    action: dict[str, JsonValue]
    """The turn's public fields that hold something (none null or false), as the record writes them."""
    private: dict[str, JsonValue]
    """Its fields only the speaker saw (``analysis.private``), shown apart and marked."""


class ShownGame(BaseModel):
    unit_id: str
    cell: str
    status: str
    models: dict[str, str]
    deal: str
    turns: list[ShownTurn]


class Snapshot(BaseModel):
    """What the page shows of one sweep."""

    name: str
    """The folder's name (``c3_full-sim``); ``grid`` is the grid it plays."""
    grid: str
    rehearsal: str | None
    simulated: bool
    note: str | None
    phase: Phase
    units: int | None
    finished: int
    known: int
    running: bool
    state: State | None
    """``read_status``'s word: ``stopped`` when the status says running but no driver holds the folder."""
    cells: list[CellRow]
    spend: list[ModelSpend]
    """What each model was paid for, from the call journal (``store.paid``)."""
    drift: list[DriftRow]
    """Models served as another version than the sweep's first answer of them (``execution.drift``)."""
    rates: Rates
    limiter: LimiterSnapshot | None
    """Only while a driver holds the folder: an ended sweep's last limiter state is not live."""
    errors: list[dict[str, Any]]  # free-form: a JSON line as decoded
    latest: list[ShownGame]
    in_flight: list[ShownTurn]
    """The latest reply of each game still being played (from the call journal), most recent first."""
    report: str | None
    """The report's address on this server, once one exists."""
    seats: SeatBoard | None = None
    """The human seats' page and how many wait, play and are done (no token: ``store.seats``)."""


def shown_game(rec: GameRecord) -> ShownGame:
    """A finished game as the page lists it: header (cell, models, status, deal and figures) and its turns."""
    unit = rec.unit
    turns = []
    for shown in shown_turns(rec):
        t = shown.turn
        parts = turn_parts(unit.family, t.fields)
        turns.append(ShownTurn(turn=t.turn, role=t.role, model=unit.models_by_role.get(t.role),
                               call_id=t.call_ids[-1] if t.call_ids else None, message=parts.message,
                               action={k: v for k, v in parts.public.items() if v not in (None, False)},
                               private=parts.private))
    return ShownGame(unit_id=unit.unit_id, cell=unit.cell, status=rec.outcome.status.value,
                     models=unit.models_by_role, deal=deal_line(game_row(rec), unit.family, list(unit.models_by_role)),
                     turns=turns)


def shown_reply(entry: CallEntry, families: list[str]) -> ShownTurn:
    """A call journal line (a reply paid for a game in flight) as a turn: a JSON reply's message and fields, its
    private ones (under any of the sweep's families) apart; any other reply as its text."""
    text = entry.reply.text
    try:
        fields = json_object(text)  # a model's text: read within the limits every game reads it in
    except RuleError:
        fields = {"message": text[:4000]}
    message = fields.pop("message", None)
    private = {k: v for k, v in fields.items() if any(is_private(f, k) for f in families or (None,))}
    public = {k: v for k, v in fields.items() if k not in private and v not in (None, False)}
    return ShownTurn(turn=None, role=None, model=entry.reply.model, call_id=entry.call_id,
                     message=None if message is None else str(message), action=public, private=private)


class Follower:
    """One sweep folder followed by byte offsets into its two journals."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offsets = {JOURNAL: 0}
        self.calls = SpendTail(path)
        """The call journal, followed and tallied (``store.paid``)."""
        self.units: dict[str, tuple[str, str]] = {}
        """unit_id -> (cell, status) of its latest record."""
        self.known: dict[str, bool] = {}
        """unit_id -> whether its latest record is known (``store.read_progress`` counts them)."""
        self.call_times = Window()
        self.game_times = Window()
        self.timed_by: set[str] = set()
        self.errors: deque[dict[str, Any]] = deque(maxlen=ERRORS)  # free-form: a JSON line as decoded
        self.latest: deque[GameRecord] = deque(maxlen=LATEST)
        self.in_flight: dict[str, CallEntry] = {}  # unit id -> its latest paid reply
        """unit_id -> the latest call journal line of a game not journaled since."""
        self.started = False
        manifest = read_manifest(path)
        self.families = sorted({str(g.get("family")) for g in manifest.config.games.values()})

    def _games(self) -> Iterator[GameRecord]:
        """The games the journal gained since the last poll (in bounded steps until caught up); a line that is not a
        record is left out, shown as one error row."""
        while True:
            start = self.offsets[JOURNAL]
            records, refused, self.offsets[JOURNAL] = read_tail(self.path / JOURNAL, start, parse_record)
            self._left_out(refused)
            yield from records
            if self.offsets[JOURNAL] == start:
                return

    def _left_out(self, refused: list[CorruptJournal]) -> None:
        """One error row per journal line that is not its record (a resume refuses the folder until it is mended)."""
        for bad in refused:
            self.errors.append({"unit_id": None, "what": f"{bad.file.name} line {bad.line}, left out",
                                "error": bad.reason})
        refused.clear()

    def _time(self, own: float | None, file: str) -> float | None:
        """The line's own time, else (for a line written since the view started) its journal's file time."""
        if own is not None:
            self.timed_by.add("journal")
            return own
        if not self.started:
            return None  # written before the view looked: when is not known
        self.timed_by.add("file")
        return (self.path / file).stat().st_mtime

    def poll(self) -> None:
        """Read what the journals gained (in bounded steps until caught up); a game of a unit the folder's current
        design leaves out (an earlier design had it) is not the sweep's now, as in the tables."""
        manifest = read_manifest(self.path)
        left_out = manifest.left_out()
        for rec in self._games():
            if left_out is not None and left_out(rec.unit):
                continue
            unit, out = rec.unit, rec.outcome
            self.units[unit.unit_id] = (unit.cell, out.status.value)
            self.known[unit.unit_id] = out.known
            self.in_flight.pop(unit.unit_id, None)
            if not out.known:
                self.errors.append({"unit_id": unit.unit_id, "what": "game unknown", "error": out.reason})
            if (at := self._time(event_time(rec.ended_at, rec.started_at), JOURNAL)) is not None:
                self.game_times.add(at)
            self.latest.append(rec)
        self.calls.spend.refer(manifest.served)
        while calls := self.calls.read():
            for entry in calls:
                if not isinstance(entry, CallEntry):
                    continue  # a void or a spend entry (``store.calls``): no reply of its own
                reply = entry.reply
                for e in reply.attempt_errors:
                    self.errors.append({"unit_id": entry.unit_id, "what": f"attempt on {reply.model}", "error": e})
                at = self._time(event_time(reply.answered_at, reply.sent_at), CALLS_JOURNAL)
                if at is not None:
                    self.call_times.add(at)
                if entry.unit_id not in self.units or self.units[entry.unit_id][1] == "TECHNICAL_ERROR":
                    self.in_flight.pop(entry.unit_id, None)
                    self.in_flight[entry.unit_id] = entry  # re-inserted: the dict keeps the newest last
        self._left_out(self.calls.refused)
        self.started = True

    def rates(self) -> Rates:
        calls = self.call_times
        return Rates(calls_last_minute=calls.last_minute(), games_last_minute=self.game_times.last_minute(),
                     timed_by="journal" if "journal" in self.timed_by else "file" if self.timed_by else "none",
                     first_s=calls.first, last_s=calls.last)

    def snapshot(self) -> Snapshot:
        self.poll()
        manifest = read_manifest(self.path)
        progress = read_progress(self.path, self.known)
        cells: dict[str, Counter[str]] = {}
        for cell, status in self.units.values():
            cells.setdefault(cell, Counter())[status] += 1
        running = progress.running is not None
        spend = self.calls.spend
        planned = progress.state is None and not self.units and not spend.models
        phase: Phase = "running" if running else "planned" if planned else progress.state or "unknown"
        providers = {"sim"} if manifest.config.provider == "sim" else set()
        told = rehearsal(manifest, providers, read_reply_noise(self.path))
        return Snapshot(
            name=self.path.name, grid=manifest.grid, rehearsal=statement(told) if told.simulated else None,
            simulated=told.simulated,
            note=None if planned else progress.note(),
            phase=phase, units=progress.units if progress.units is not None else planned_units(manifest),
            finished=len(self.units), known=progress.known,
            running=running, state=progress.state,
            cells=[CellRow(cell=c, finished=sum(n.values()), agreements=n["AGREEMENT"],
                           failures=n["FORMAT_FAILURE"] + n["TECHNICAL_ERROR"]) for c, n in sorted(cells.items())],
            spend=[m for _, m in sorted(spend.models.items())],
            drift=[DriftRow.of(d) for d in spend.drifts.values()],
            rates=self.rates(),
            limiter=read_limiter(self.path) if running else None,
            errors=list(reversed(self.errors)),
            latest=[shown_game(r) for r in reversed(self.latest)],
            in_flight=[shown_reply(e, self.families) for e in reversed(list(self.in_flight.values())[-RUNNING:])]
            if running else [],
            report=f"files/{self.path.name}/{REPORT}" if (self.path / REPORT).is_file() else None,
            seats=seats.board() if (seats := read_seats(self.path)) is not None else None,
        )


def sweep_folders(root: Path) -> dict[str, Path]:
    """name -> path of every sweep folder directly under ``root`` (it holds a manifest): what the view lists, and
    all it serves. A folder linked into ``root`` is one of them like any other (ours: the link was put there)."""
    return {p.name: p for p in root.iterdir() if (p / MANIFEST).is_file()} if root.is_dir() else {}


def list_sweeps(root: Path) -> list[dict[str, Any]]:  # free-form: a response body, JSON as sent (/sweeps)
    """Every sweep folder of ``root`` (``sweep_folders``), newest first: from its status file and lock only, so
    listing many large sweeps reads no journal. A folder no driver has started (a dry run wrote its manifest) is
    ``planned`` with the units its design lays out."""
    folders = sorted(sweep_folders(root).values(), key=lambda p: -p.stat().st_mtime)
    out = []
    for p in folders:
        status = read_status(p)
        if status is None and not (p / JOURNAL).exists():
            out.append({"name": p.name, "units": planned_units(read_manifest(p)), "state": "planned"})
            continue
        out.append({"name": p.name, "units": status.units if status else None,
                    "state": "running" if lock_holder(p) else status.state if status else "unknown"})
    return out


PAGE_SCRIPT = """
function el(tag, text, cls){var e=document.createElement(tag); if(text!==undefined) e.textContent=text;
  if(cls) e.className=cls; return e;}
function table(cols, rows){var t=el("table"), h=el("tr"); cols.forEach(function(c){h.appendChild(el("th", c));});
  t.appendChild(h); rows.forEach(function(r){var tr=el("tr"); r.forEach(function(v){tr.appendChild(el("td",
  v===null||v===undefined?"":String(v)));}); t.appendChild(tr);}); return t;}
function section(root, title){root.appendChild(el("h2", title));}
var WORDS={planned:"planned, not started", running:"running", ended:"ended", interrupted:"interrupted (stopped by a signal)",
  stopped:"stopped (its driver ended without a word)", unknown:"unknown"};
function showSweeps(list){
  var root=document.getElementById("sweeps"); root.replaceChildren(); section(root, "Sweeps");
  var ul=el("ul"); list.forEach(function(s){var li=el("li"), a=el("a", s.name); a.href="?sweep="+encodeURIComponent(s.name);
    li.appendChild(a); li.appendChild(document.createTextNode(" " + (s.units===null?"?":s.units) + " units, " +
    (WORDS[s.state]||s.state))); ul.appendChild(li);}); root.appendChild(ul);
}
function seconds(s){if(s===null) return "?"; var m=Math.floor(s/60); return (m? m+" min ":"") + Math.round(s%60)+" s";}
function showTurn(parent, t){
  var div=el("div", undefined, "turn");
  div.appendChild(el("h4", (t.turn===null? "latest reply" : "Turn "+t.turn) + (t.role? " · "+t.role : "") +
    (t.model? " · "+t.model : "") + (t.call_id? " · "+t.call_id : "")));
  if(t.message!==null) div.appendChild(el("p", t.message));
  if(Object.keys(t.action).length) div.appendChild(el("pre", JSON.stringify(t.action)));
  Object.entries(t.private).forEach(function(e){var p=el("div", undefined, "private");
    p.appendChild(el("span", "PRIVATE · " + e[0] + ": never shown to the other side", "tag"));
    p.appendChild(el("pre", typeof e[1]==="string"? e[1] : JSON.stringify(e[1]))); div.appendChild(p);});
  parent.appendChild(div);
}
function showSweep(s){
  var root=document.getElementById("sweep"); root.replaceChildren();
  document.title=s.name + " · bargain_ray live view";
  document.getElementById("title").textContent="Sweep " + s.name + (s.grid!==s.name ? " (grid " + s.grid + ")" : "");
  var state=el("p", WORDS[s.phase]||s.phase, "phase"); state.id="phase"; state.dataset.phase=s.phase; root.appendChild(state);
  if(s.report){var r=el("p"), a=el("a", "the report"); a.href=s.report; a.id="report"; r.appendChild(a); root.appendChild(r);}
  if(s.rehearsal) root.appendChild(el("p", s.rehearsal, "sim"));
  var p=el("p"); p.id="finished"; p.dataset.finished=s.finished;
  p.textContent=(s.phase==="planned" ? "planned, not started: " + s.units + " units, none played yet" :
    "finished games: " + s.finished + " of " + (s.units===null?"?":s.units) + " units (" + s.known + " known)");
  root.appendChild(p); if(s.note) root.appendChild(el("div", s.note, "technical"));
  if(s.seats){var q=el("p", "human seats: " + s.seats.waiting + " waiting, " + s.seats.playing + " playing, " +
    s.seats.done + " done; seat page (lobby) "), a=el("a", s.seats.url); a.href=s.seats.url; q.id="seats";
    q.appendChild(a); root.appendChild(q);}
  s.drift.forEach(function(d){var w=el("div", "drift: " + d.model + " was served as " + d.served + " in " + d.calls +
    " calls from " + d.first_call + ", not as the sweep's reference " + d.reference, "technical"); w.className+=" drift";
    root.appendChild(w);});
  if(s.phase==="planned") return;
  section(root, "Progress by cell");
  root.appendChild(table(["cell","finished","agreements","failures"],
    s.cells.map(function(c){return [c.cell,c.finished,c.agreements,c.failures];})));
  section(root, (s.running ? "Spend by model" : "Final figures by model") + (s.simulated ? " (simulated costs: provider=sim)" : ""));
  root.appendChild(table(["model","calls","input tokens","output tokens","cost_usd" + (s.simulated ? " (simulated)" : ""),"429s"],
    s.spend.map(function(m){return [m.model,m.calls,m.input_tokens,m.output_tokens,m.cost_usd.toFixed(4),m.rate_limited];})));
  var rt=s.rates, how={journal:"from the journals' timestamps", file:"from the call journal's file times while this view watched (its lines carry no timestamps)", none:"no call has a time yet"}[rt.timed_by];
  var rates=el("p", undefined, "meta"); rates.id="rates";
  rates.textContent=(s.running ? "calls in the latest minute: " + (rt.calls_last_minute===null?"?":rt.calls_last_minute) +
    ", games: " + (rt.games_last_minute===null?"?":rt.games_last_minute) :
    "calls from the first to the last: " + seconds(rt.first_s===null||rt.last_s===null? null : rt.last_s-rt.first_s)) + " (" + how + ")";
  root.appendChild(rates);
  if(s.running){
    section(root, "Rate limiter");
    if(s.limiter){root.appendChild(el("p", "as the driver saw it at " + s.limiter.at, "meta"));
      root.appendChild(table(["key","window","slow start","in flight","waiting","paused for s","paces per minute"],
        s.limiter.keys.map(function(k){return [k.key,k.window,k.slow_start,k.in_flight,k.waiting,k.paused_for_s.toFixed(1),
        Object.entries(k.paces).map(function(e){return e[0]+" "+Math.round(e[1]);}).join(", ")];})));}
    else root.appendChild(el("p", "no limiter state recorded (no model calls yet, or no LLM in this sweep)", "meta"));
    section(root, "Games in flight: the latest reply of each");
    var flight=el("div"); flight.id="in-flight"; s.in_flight.forEach(function(t){showTurn(flight, t);}); root.appendChild(flight);
    if(!s.in_flight.length) flight.appendChild(el("p", "no reply journaled for a game in flight", "meta"));
  }
  section(root, "Latest errors");
  root.appendChild(table(["unit","what","error"], s.errors.map(function(e){return [e.unit_id,e.what,e.error];})));
  section(root, "Latest games");
  s.latest.forEach(function(g){
    var d=el("details"); d.className="game"; var sum=el("summary");
    sum.textContent=g.unit_id + " · " + g.cell + " · " + Object.entries(g.models).map(function(e){return e[0]+": "+e[1];})
      .join(", ") + " · " + g.status + " · " + g.deal; d.appendChild(sum);
    g.turns.forEach(function(t){showTurn(d, t);}); root.appendChild(d);
  });
}
var polls=0;
function refresh(){
  if(polls++ % 10 === 0) fetch("api/sweeps").then(function(r){return r.json();}).then(showSweeps);
  if(sweep) fetch("api/sweep?name=" + encodeURIComponent(sweep)).then(function(r){return r.ok ? r.json() : null;}).then(function(s){
    if(!s){document.getElementById("sweep").textContent="no sweep of that name here"; return;}
    showSweep(s); document.getElementById("updated").textContent="updated " + new Date().toISOString();});
}
refresh(); setInterval(refresh, POLL);
"""


def page(name: str | None) -> str:
    """The page for one sweep (``name``) or the list; every value placed in it is escaped for its context."""
    title = f"{name} · bargain_ray live view" if name else "bargain_ray live view"
    heading = f"Sweep {name}" if name else "bargain_ray live view"
    return ('<!doctype html><html lang="en"><head><meta charset="utf-8">'
            f"<title>{escape(title)}</title><style>{CSS} .phase{{font-weight:600}}</style></head><body>"
            f'<h1 id="title">{escape(heading)}</h1><p class="meta" id="updated"></p><div id="sweep"></div>'
            f'<div id="sweeps"></div><script>var sweep = {script_value(name)}; var POLL = {POLL_MS};'
            f"{PAGE_SCRIPT}</script></body></html>")


_TABLE_FILES = sorted(f"{stem}.{kind}" for stem in (*CARD_TABLES.values(), *EXTRA_TABLES.values())
                      for kind in ("parquet", "csv"))
SERVED = re.compile("|".join([
    re.escape(REPORT), r"report-by-[\w-]+\.html", re.escape(JOURNAL),
    *(re.escape(f"{DATASET}/{name}") for name in ("README.md", f"spec/{MANIFEST}", *_TABLE_FILES)),
    rf"{re.escape(DATASET)}/raw/[^/]+\.jsonl"]))
"""What of a sweep folder the view serves (read-only), by its whole path in the folder: its reports, its dataset
(the report's raw links) as the export writes it, and the journal the report links to at scale; nothing else."""


def make_app(root: Path, default: str | None = None) -> web.Application:
    """The server: ``/`` (the page; ``?sweep=NAME`` shows one), ``/api/sweeps``, ``/api/sweep?name=NAME``, and
    ``/files/NAME/report.html`` (a sweep's report and what it links to)."""
    followers: dict[str, Follower] = {}

    def folder(name: str) -> Path:
        path = sweep_folders(root).get(name)
        if path is None:
            raise web.HTTPNotFound(text=f"no sweep {name!r} under {root}")
        return path.resolve()

    async def index(request: web.Request) -> web.Response:
        return web.Response(text=page(request.query.get("sweep") or default), content_type="text/html")

    async def sweeps(request: web.Request) -> web.Response:
        return web.json_response(list_sweeps(root))

    async def sweep(request: web.Request) -> web.Response:
        name = request.query.get("name", "")
        path = folder(name)
        follower = followers.setdefault(name, Follower(path))
        return web.Response(text=follower.snapshot().model_dump_json(), content_type="application/json")

    async def files(request: web.Request) -> web.StreamResponse:
        base = folder(request.match_info["name"])
        tail = request.match_info["tail"]
        target = (base / tail).resolve()
        if not target.is_relative_to(base) or not target.is_file() or not SERVED.fullmatch(
                target.relative_to(base).as_posix()):
            raise web.HTTPNotFound(text="not a file the view serves")
        return web.FileResponse(target)

    app = web.Application()
    app.add_routes([web.get("/", index), web.get("/api/sweeps", sweeps), web.get("/api/sweep", sweep),
                    web.get("/files/{name}/{tail:.+}", files)])
    return app
