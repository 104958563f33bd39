"""The seat page and the lobby: static HTML, one stylesheet and one script, with no data of any seat in them.

The script reads its seat's view as JSON (``/s/<token>/view``, a long-poll) and builds the page with
``textContent`` only, so whatever a person or a model wrote is shown as text; the page's Content-Security-Policy
allows no inline script either. It keeps what the person typed until the turn changes, and keeps asking when the
server is gone (a restarted sweep serves the same seat on the same address).
"""

from __future__ import annotations

CSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; form-action 'self'"
HEADERS = {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
           "Cache-Control": "no-store", "X-Frame-Options": "DENY"}
"""Every answer's headers: no inline script, no referrer (a seat's link is its key), nothing cached."""

CSS = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 0; color: #1d2430; background: #f4f5f7; }
header { background: #24303f; color: #fff; padding: 10px 18px; display: flex; gap: 16px; align-items: baseline; }
header h1 { font-size: 17px; margin: 0; }
main { display: grid; grid-template-columns: minmax(300px, 1fr) minmax(340px, 1fr); gap: 16px; padding: 16px; }
section { background: #fff; border: 1px solid #d8dce3; border-radius: 6px; padding: 12px 14px; }
h2 { font-size: 14px; text-transform: uppercase; letter-spacing: .04em; color: #56617a; margin: 0 0 8px; }
.text { white-space: pre-wrap; word-break: break-word; }
.said { border-left: 3px solid #9fb3c8; padding: 4px 10px; margin: 8px 0; }
.said.you { border-color: #4f8a5b; background: #f1f8f2; }
.said .by { font-size: 12px; color: #56617a; }
#status { font-weight: 600; }
#status.your_turn { color: #b35c00; }
#moves button { margin: 0 6px 6px 0; padding: 6px 12px; border: 1px solid #8a96a8; background: #fff; border-radius: 4px; }
#moves button.chosen { background: #24303f; color: #fff; }
label { display: block; margin: 10px 0 2px; font-weight: 600; }
.hint { font-weight: 400; color: #56617a; font-size: 13px; }
input, select, textarea { font: inherit; padding: 5px; width: 100%; box-sizing: border-box; }
textarea { min-height: 70px; }
#send { margin-top: 12px; padding: 8px 18px; background: #b35c00; color: #fff; border: 0; border-radius: 4px; }
#error { color: #a11; white-space: pre-wrap; }
#note { background: #fff6e0; border: 1px solid #e7c77c; padding: 8px 10px; border-radius: 4px; }
.hidden { display: none; }
"""

SEAT_HTML = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Negotiation seat</title>
<link rel="stylesheet" href="/seat.css"></head>
<body><header><h1 id="title">Negotiation</h1><span id="status">connecting…</span><span id="clock"></span></header>
<main><div><section><h2>Your private brief</h2><div id="brief" class="text"></div></section></div>
<div><section><h2>The game so far</h2><div id="record"></div></section>
<section id="note" class="hidden"></section>
<section id="turn" class="hidden"><h2>Your reply</h2><div id="moves"></div><div id="fields"></div>
<div id="error"></div><button id="send" type="button">Send</button></section></div></main>
<script src="/seat.js"></script></body></html>
"""

LOBBY_HTML = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Negotiation lobby</title>
<link rel="stylesheet" href="/seat.css"></head>
<body><header><h1>Negotiation lobby</h1></header><main><section>
<p>You will negotiate in a game played through this page. Press the button to take the next free seat.</p>
<form method="post" action="/join"><button id="join" type="submit">Take a seat</button></form>
</section></main></body></html>
"""

FULL_HTML = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Negotiation lobby</title>
<link rel="stylesheet" href="/seat.css"></head>
<body><header><h1>Negotiation lobby</h1></header><main><section>
<p id="full">No seat is free now: every seat has been taken. Ask the person running the session.</p>
</section></main></body></html>
"""

SCRIPT = r"""
"use strict";
const base = location.pathname.replace(/\/$/, "");
let version = -1, call = null, chosen = 0, view = null, deadline = null, seen = null;
const $ = (id) => document.getElementById(id);
const el = (tag, cls, text) => {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
};
const words = (s) => s.trim() ? s.trim().split(/\s+/).length : 0;
const PHASES = {waiting: "waiting for the other side", your_turn: "your turn", over: "the game is over",
                stopped: "the game is paused"};  // "offline" while the server does not answer

function key(f) { return f.path.join("."); }

function fieldInput(f) {
  const wrap = el("div", "field");
  const label = el("label", null, f.label + " ");
  const bits = [];
  if (f.hint) bits.push(f.hint);
  if (f.minimum !== null && f.maximum !== null) bits.push(`from ${f.minimum} to ${f.maximum}`);
  if (f.decimals !== null) bits.push(`at most ${f.decimals} decimal places`);
  if (f.optional) bits.push("optional");
  label.appendChild(el("span", "hint", bits.join("; ")));
  wrap.appendChild(label);
  let input;
  if (f.kind === "choice" || f.kind === "flag") {
    input = el("select");
    for (const o of (f.kind === "flag" ? ["true", "false"] : f.options)) input.appendChild(el("option", null, o));
  } else if (f.kind === "text") {
    input = el("textarea");
  } else {
    input = el("input");
    input.type = "text";
    input.inputMode = "decimal";
  }
  input.name = key(f);
  input.dataset.key = key(f);
  wrap.appendChild(input);
  if (f.kind === "text") {
    const count = el("div", "hint count");
    const show = () => {
      const n = words(input.value);
      count.textContent = `${n} word${n === 1 ? "" : "s"}` + (f.max_words !== null ? ` of at most ${f.max_words}` : "")
        + (f.max_chars !== null ? `; ${input.value.length} of at most ${f.max_chars} characters` : "");
    };
    input.addEventListener("input", show);
    show();
    wrap.appendChild(count);
  }
  return wrap;
}

function showMove(i) {
  chosen = i;
  const kept = {};
  for (const input of $("fields").querySelectorAll("[data-key]")) kept[input.dataset.key] = input.value;
  $("fields").replaceChildren();
  const buttons = $("moves").querySelectorAll("button");
  buttons.forEach((b, j) => b.classList.toggle("chosen", j === i));
  for (const f of view.form.moves[i].fields) {
    const w = fieldInput(f);
    const input = w.querySelector("[data-key]");
    if (kept[key(f)] !== undefined) input.value = kept[key(f)];
    input.dispatchEvent(new Event("input"));
    $("fields").appendChild(w);
  }
}

function showForm() {
  $("moves").replaceChildren();
  $("error").textContent = "";
  view.form.moves.forEach((m, i) => {
    const b = el("button", null, m.label);
    b.type = "button";
    b.dataset.move = String(i);
    b.addEventListener("click", () => showMove(i));
    $("moves").appendChild(b);
  });
  showMove(0);
}

function render(v) {
  view = v;
  $("title").textContent = `${v.game}: you are the ${v.role}`;
  $("status").textContent = PHASES[v.phase];
  $("status").className = v.phase;
  $("status").dataset.phase = v.phase;
  if (v.brief !== null) seen = v;  // a restarted server knows a seat's request only once it asks again: keep the last
  const shown = seen || v;
  $("brief").textContent = shown.brief === null ? "(your brief appears with your first turn)" : shown.brief;
  $("record").replaceChildren();
  for (const m of shown.messages) {
    const d = el("div", "said " + m.by);
    d.appendChild(el("div", "by", m.by === "you" ? "you wrote" : "the game"));
    d.appendChild(el("div", "text", m.text));
    $("record").appendChild(d);
  }
  $("note").classList.toggle("hidden", v.note === null);
  $("note").textContent = v.note === null ? "" : v.note;
  $("turn").classList.toggle("hidden", v.phase !== "your_turn");
  deadline = v.limit_s === null ? null : Date.now() + v.limit_s * 1000;
  if (v.call !== call) {
    call = v.call;
    if (v.form) showForm();
  }
  document.body.dataset.version = String(v.version);
  document.body.dataset.call = v.call || "";
}

setInterval(() => {
  $("clock").textContent = deadline === null ? "" : `${Math.max(0, Math.round((deadline - Date.now()) / 1000))} s left`;
}, 500);

async function send() {
  const values = {};
  for (const input of $("fields").querySelectorAll("[data-key]")) values[input.dataset.key] = input.value;
  $("send").disabled = true;
  try {
    const r = await fetch(base + "/answer", {method: "POST", headers: {"Content-Type": "application/json"},
                                             body: JSON.stringify({call: call, move: chosen, values: values})});
    const body = await r.json();
    $("error").textContent = body.error || "";
  } catch (e) {
    $("error").textContent = "not sent: the server does not answer; send again in a moment";
  } finally {
    $("send").disabled = false;
  }
}
$("send").addEventListener("click", send);

async function follow() {
  for (;;) {
    try {
      const r = await fetch(`${base}/view?since=${version}`, {cache: "no-store"});
      if (r.status === 404) { $("status").textContent = "no such seat"; return; }
      const v = await r.json();
      version = v.version;
      render(v);
    } catch (e) {
      $("status").textContent = "the seat server does not answer: keep this page open, it continues when the sweep runs again";
      $("status").dataset.phase = "offline";
      await new Promise((done) => setTimeout(done, 1000));
    }
  }
}
follow();
"""
