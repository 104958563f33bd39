"""Debian's headless Chromium driven through the DevTools protocol (aiohttp's websocket client; no browser download).

``Browser`` is one Chromium process with its own profile; ``Page`` one tab, which waits on its DOM with a
MutationObserver (an event, never a clock), types as a person does (``Input.insertText``), clicks, and records
every response its pages received (the Network domain), bodies included.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import aiohttp

WAIT_S = 240.0
"""The longest a page waits for what a test expects of it (a loaded machine starts a sweep slowly)."""


class Browser:
    """One headless Chromium and its DevTools connection (an async context manager)."""

    def __init__(self, profile: Path) -> None:
        self.profile = profile
        self.proc: subprocess.Popen[str] | None = None
        self.session: aiohttp.ClientSession | None = None
        self.ws: aiohttp.ClientWebSocketResponse | None = None
        self.ids = itertools.count(1)
        self.waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.pages: dict[str, Page] = {}
        self.reader: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Browser:
        chromium = shutil.which("chromium")
        assert chromium, "Debian's chromium is required: apt-get install -y chromium"
        self.proc = subprocess.Popen(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
             "--disable-extensions", "--remote-debugging-port=0", f"--user-data-dir={self.profile}",
             "--window-size=1280,900", "about:blank"], stderr=subprocess.PIPE, text=True)
        url = await asyncio.to_thread(self._devtools_url)
        self.session = aiohttp.ClientSession()
        self.ws = await self.session.ws_connect(url, max_msg_size=0)
        self.reader = asyncio.ensure_future(self._read())
        return self

    def _devtools_url(self) -> str:
        assert self.proc is not None and self.proc.stderr is not None
        for line in self.proc.stderr:
            if m := re.search(r"DevTools listening on (ws://\S+)", line):
                return m[1]
        raise AssertionError("chromium ended before it listened")

    async def __aexit__(self, *exc: object) -> None:
        if self.reader is not None:
            self.reader.cancel()
        if self.ws is not None:
            await self.ws.close()
        if self.session is not None:
            await self.session.close()
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()

    async def _read(self) -> None:
        assert self.ws is not None
        async for msg in self.ws:
            data = json.loads(msg.data)
            if "id" in data and data["id"] in self.waiting:
                self.waiting.pop(data["id"]).set_result(data)
            elif (page := self.pages.get(data.get("sessionId", ""))) is not None:
                page.event(data["method"], data.get("params", {}))

    async def send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> Any:
        assert self.ws is not None
        n = next(self.ids)
        done = asyncio.get_running_loop().create_future()
        self.waiting[n] = done
        await self.ws.send_str(json.dumps({"id": n, "method": method, "params": params or {}}
                                          | ({"sessionId": session} if session else {})))
        data = await asyncio.wait_for(done, WAIT_S)
        assert "error" not in data, (method, data["error"])
        return data["result"]

    async def page(self, url: str) -> Page:
        """A new tab, recording its responses, at ``url``."""
        target = (await self.send("Target.createTarget", {"url": "about:blank"}))["targetId"]
        session = (await self.send("Target.attachToTarget", {"targetId": target, "flatten": True}))["sessionId"]
        page = Page(self, session)
        self.pages[session] = page
        await page.send("Network.enable")
        await page.send("Page.enable")
        await page.goto(url)
        return page


class Page:
    """One tab: its DOM read and driven through JavaScript, its responses recorded."""

    def __init__(self, browser: Browser, session: str) -> None:
        self.browser = browser
        self.session = session
        self.urls: dict[str, str] = {}
        self.finished: list[str] = []
        self.loaded = asyncio.Event()

    async def send(self, method: str, params: dict[str, Any] | None = None) -> Any:
        return await self.browser.send(method, params, self.session)

    def event(self, method: str, params: dict[str, Any]) -> None:
        if method == "Network.responseReceived":
            self.urls[params["requestId"]] = params["response"]["url"]
        elif method == "Network.loadingFinished":
            self.finished.append(params["requestId"])
        elif method == "Page.loadEventFired":
            self.loaded.set()

    async def goto(self, url: str) -> None:
        self.loaded.clear()
        await self.send("Page.navigate", {"url": url})
        await asyncio.wait_for(self.loaded.wait(), WAIT_S)

    async def follow(self, element: str) -> None:
        """Click ``element`` (by id) and wait for the page it leads to to load."""
        self.loaded.clear()
        await self.eval(f"document.getElementById({json.dumps(element)}).click(), true")
        await asyncio.wait_for(self.loaded.wait(), WAIT_S)

    async def eval(self, expression: str) -> Any:
        """The value of ``expression`` (a promise is awaited)."""
        out = await self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                   "awaitPromise": True})
        assert "exceptionDetails" not in out, out["exceptionDetails"]
        return out["result"].get("value")

    async def until(self, condition: str, wait_s: float = WAIT_S) -> Any:
        """The value of the JavaScript ``condition`` once it is truthy: checked again at every change of the DOM."""
        js = f"""new Promise((done) => {{
            const check = () => {{ const v = ({condition}); if (v) {{ done(v); return true; }} return false; }};
            if (!check()) {{
                const seen = new MutationObserver(() => {{ if (check()) seen.disconnect(); }});
                seen.observe(document, {{subtree: true, childList: true, attributes: true, characterData: true}});
            }}
        }})"""
        return await asyncio.wait_for(self.eval(js), wait_s)

    async def phase(self, *phases: str) -> str:
        """Wait until the seat page's phase is one of ``phases``."""
        wanted = json.dumps(list(phases))
        return await self.until(f"{wanted}.includes(document.getElementById('status')?.dataset.phase)"
                                " && document.getElementById('status').dataset.phase")

    async def type(self, key: str, text: str) -> None:
        """Clear the field ``key`` (a form field's path) and type ``text`` into it as a person does."""
        await self.eval(f"(() => {{ const e = document.querySelector('[data-key={json.dumps(key)}]'); "
                        "e.value = ''; e.focus(); return true; })()")
        await self.send("Input.insertText", {"text": text})

    async def choose(self, move: str) -> None:
        """Pick the move whose button reads ``move`` (its label starts with it)."""
        assert await self.eval(f"""(() => {{
            const b = [...document.querySelectorAll('#moves button')].find(b => b.textContent.startsWith({json.dumps(move)}));
            if (!b) return false; b.click(); return true; }})()"""), f"no move {move}"

    async def send_reply(self) -> None:
        await self.eval("document.getElementById('send').click(), true")

    async def text(self, element: str) -> str:
        return await self.eval(f"document.getElementById({json.dumps(element)}).innerText")

    async def screenshot(self, path: Path) -> None:
        shot = await self.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True})
        path.write_bytes(base64.b64decode(shot["data"]))

    async def bodies(self) -> list[tuple[str, str]]:
        """(url, body) of every response the tab received and finished loading."""
        out = []
        for request in self.finished:
            if request in self.urls:
                body = await self.send("Network.getResponseBody", {"requestId": request})
                text = base64.b64decode(body["body"]).decode() if body["base64Encoded"] else body["body"]
                out.append((self.urls[request], text))
        return out
