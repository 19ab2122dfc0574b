"""A minimal headless-Chromium driver over the DevTools protocol (``--remote-debugging-pipe``).

Just enough to load a page, collect console errors, uncaught exceptions and
network requests, evaluate an expression and take a full-page screenshot.
Messages are JSON objects separated by NUL bytes; Chromium reads fd 3 and
writes fd 4.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import select
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from cputime import scaled

CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "chromium", "chromium-browser")

# As the machine notes say: without the networking flags Chromium keeps trying
# to reach Google's hosts, which this sandbox refuses.
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars", "--mute-audio", "--remote-debugging-pipe")


def find_chromium() -> str | None:
    for name in CHROMIUM_CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return None


def require_chromium() -> str:
    """Chromium's path; a test without it is skipped, except under CI (``CI`` set), where
    `.ci/run` installs Debian's chromium and a missing browser is a failure."""
    exe = find_chromium()
    if exe is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed, but CI must run the browser test "
                        "(.ci/run installs Debian's chromium)")
        pytest.skip("chromium is not installed (apt-get install chromium)")
    return exe


@dataclass
class PageLoad:
    """What one page load showed."""

    errors: list[str] = field(default_factory=list)        # console errors, exceptions, log errors
    requests: list[str] = field(default_factory=list)      # every URL the page asked for
    value: Any = None                                      # the evaluated expression's result
    screenshot: bytes = b""                                # full-page PNG


class CDPError(RuntimeError):
    pass


class Chromium:
    def __init__(self, exe: str, profile: Path, timeout: float | None = None) -> None:
        # A page load is Chromium's several processes, whose CPU time cannot be bounded
        # from here: the wait is in wall time, 60 s on an idle machine stretched by how
        # slow the machine is now (``cputime.scaled``), a safety net and not a budget.
        timeout = scaled(60.0) if timeout is None else timeout
        to_r, self._to_w = os.pipe()
        self._from_r, from_w = os.pipe()
        # Chromium wants the pipe on fds 3 and 4 exactly. Move our ends to fds >= 10 so that
        # placing them on 3 and 4 cannot clobber one another. bash does the placing (dash
        # takes one-digit fds only): no preexec_fn (unsafe with threads), and no pass_fds
        # naming 3 and 4, which fails when the parent has no such fds open.
        hi_r = fcntl.fcntl(to_r, fcntl.F_DUPFD_CLOEXEC, 10)
        hi_w = fcntl.fcntl(from_w, fcntl.F_DUPFD_CLOEXEC, 10)
        for fd in (to_r, from_w):
            os.close(fd)
        wire = f'exec "$0" "$@" 3<&{hi_r} 4>&{hi_w} {hi_r}<&- {hi_w}>&-'
        self._proc = subprocess.Popen(
            ["/bin/bash", "-c", wire, exe, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            pass_fds=(hi_r, hi_w))
        os.close(hi_r)
        os.close(hi_w)
        self._deadline = time.monotonic() + timeout
        self._buf = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []

    def close(self) -> str:
        """Stop the browser; return its stderr (for failure messages)."""
        with contextlib.suppress(CDPError, OSError):
            self.send("Browser.close")
        for fd in (self._to_w, self._from_r):
            with contextlib.suppress(OSError):
                os.close(fd)
        try:
            _, err = self._proc.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            _, err = self._proc.communicate()
        return err.decode(errors="replace")

    def _read_message(self) -> dict[str, Any]:
        while b"\0" not in self._buf:
            left = self._deadline - time.monotonic()
            if left <= 0:
                raise CDPError("timed out waiting for Chromium")
            ready, _, _ = select.select([self._from_r], [], [], left)
            if not ready:
                continue
            chunk = os.read(self._from_r, 1 << 20)
            if not chunk:
                raise CDPError("Chromium closed the DevTools pipe")
            self._buf += chunk
        raw, self._buf = self._buf.split(b"\0", 1)
        message: dict[str, Any] = json.loads(raw)
        return message

    def send(self, method: str, params: dict[str, Any] | None = None,
             session: str | None = None) -> dict[str, Any]:
        self._next_id += 1
        msg: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._to_w, json.dumps(msg).encode() + b"\0")
        while True:
            reply = self._read_message()
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise CDPError(f"{method}: {reply['error']}")
                result: dict[str, Any] = reply.get("result", {})
                return result
            if "method" in reply:
                self.events.append(reply)

    def wait_event(self, method: str) -> dict[str, Any]:
        for event in self.events:
            if event["method"] == method:
                return event
        while True:
            event = self._read_message()
            if "method" in event:
                self.events.append(event)
                if event["method"] == method:
                    return event


def _errors(events: list[dict[str, Any]]) -> list[str]:
    out: list[str] = []
    for e in events:
        p = e.get("params", {})
        if e["method"] == "Runtime.exceptionThrown":
            details = p["exceptionDetails"]
            thrown = details.get("exception", {}).get("description", "")
            out.append(f"{details.get('text')}: {thrown}")
        elif e["method"] == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            out.append("console." + p["type"] + ": " +
                       " ".join(str(a.get("value", a.get("description"))) for a in p["args"]))
        elif e["method"] == "Log.entryAdded" and p["entry"]["level"] == "error":
            out.append(f"log: {p['entry']['text']} ({p['entry'].get('url', '')})")
    return out


def load_page(exe: str, url: str, expression: str, profile: Path, width: int = 1280,
              height: int = 900) -> PageLoad:
    """Open ``url`` at ``width`` CSS px, wait for the load event, evaluate ``expression``
    (its value returned by value), then screenshot the whole page at its full height.
    """
    browser = Chromium(exe, profile)
    ok = False
    try:
        targets = browser.send("Target.getTargets")["targetInfos"]
        pages = [t for t in targets if t["type"] == "page"]
        target = (pages[0]["targetId"] if pages
                  else browser.send("Target.createTarget", {"url": "about:blank"})["targetId"])
        session = browser.send("Target.attachToTarget",
                               {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            browser.send(f"{domain}.enable", session=session)
        metrics = {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}
        browser.send("Emulation.setDeviceMetricsOverride", metrics, session)
        nav = browser.send("Page.navigate", {"url": url}, session)
        if nav.get("errorText"):
            raise CDPError(f"navigation failed: {nav['errorText']}")
        browser.wait_event("Page.loadEventFired")
        # Lay the page out at its full height so every figure is on screen at once.
        size = browser.send("Page.getLayoutMetrics", session=session)["cssContentSize"]
        full = {**metrics, "height": int(size["height"]) + 1}
        browser.send("Emulation.setDeviceMetricsOverride", full, session)
        value = browser.send("Runtime.evaluate", {"expression": expression,
                                                  "returnByValue": True}, session)
        if "exceptionDetails" in value:
            raise CDPError(f"evaluate: {value['exceptionDetails']}")
        shot = browser.send("Page.captureScreenshot", {"format": "png"}, session)
        requests = [e["params"]["request"]["url"] for e in browser.events
                    if e["method"] == "Network.requestWillBeSent"]
        ok = True
        return PageLoad(errors=_errors(browser.events), requests=requests,
                        value=value["result"].get("value"),
                        screenshot=base64.b64decode(shot["data"]))
    finally:
        stderr = browser.close()
        if not ok:
            print("chromium stderr:\n" + stderr[-4000:])
