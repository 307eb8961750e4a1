"""Open report pages in a real browser (headless Chromium) and say what a reader would see.

:func:`check_pages` starts one headless Chromium (Debian's ``chromium``) talking the Chrome
DevTools Protocol over a pipe (``--remote-debugging-pipe``: no port, no extra package), opens
each page, waits for its load event and reports, per page: console errors and uncaught
exceptions, failed requests, images that do not decode, which of the expected element ids are
missing, and (optionally) a PNG screenshot.
"""
from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

from .errors import InputError

#: executables tried, in order, when none is given
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "chrome")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-extensions", "--hide-scrollbars", "--mute-audio", "--disable-dev-shm-usage",
         "--remote-debugging-pipe")

#: JavaScript run in each loaded page: decode every image, collect the ids present
_PAGE_SCRIPT = """(async (ids) => {
  const images = await Promise.all([...document.images].map(async (img, i) => {
    try { await img.decode(); return img.naturalWidth > 0 ? null : `image ${i} (${img.alt}) has no width`; }
    catch (e) { return `image ${i} (${img.alt}) does not decode: ${e}`; }
  }));
  return {bad_images: images.filter(x => x), n_images: document.images.length,
          missing: ids.filter(id => !document.getElementById(id) && !document.querySelector(id)),
          title: document.title, height: document.documentElement.scrollHeight};
})"""


def find_chromium(executable: str | None = None) -> str:
    """The Chromium executable (``executable`` or the first of :data:`CHROMIUM_NAMES` on PATH)."""
    for name in ([executable] if executable else CHROMIUM_NAMES):
        path = shutil.which(name)
        if path:
            return path
    raise InputError("no Chromium found", fix="install it (Debian: apt-get install chromium) or pass its path")


@dataclass
class PageReport:
    """What one page did in the browser."""

    path: str
    console_errors: list[str] = field(default_factory=list)
    failed_requests: list[str] = field(default_factory=list)
    bad_images: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    n_images: int = 0
    title: str = ""
    screenshot: str = ""

    @property
    def ok(self) -> bool:
        return not (self.console_errors or self.failed_requests or self.bad_images or self.missing)


class _Pipe:
    """A CDP session over Chromium's --remote-debugging-pipe (fd 3 in, fd 4 out, NUL-framed)."""

    def __init__(self, executable: str, timeout: float):
        self.timeout = timeout
        to_child_r, self._w = os.pipe()
        self._r, from_child_w = os.pipe()
        self.profile = tempfile.mkdtemp(prefix="fmat-chromium-")

        parent_ends = (self._w, self._r)

        def setup():  # in the child: the pipe ends at fds 3 and 4, the parent's ends closed
            import fcntl

            high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (to_child_r, from_child_w)]
            for fd in parent_ends:  # (numbers 3 and 4 are overwritten below anyway)
                os.close(fd)
            for fd, target in zip(high, (3, 4)):
                os.dup2(fd, target)
                os.close(fd)

        self.proc = subprocess.Popen([executable, *FLAGS, f"--user-data-dir={self.profile}", "about:blank"],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     preexec_fn=setup, close_fds=False)  # close_fds would close 3 and 4
        os.close(to_child_r)
        os.close(from_child_w)
        self._buf = b""
        self._id = 0
        self.events: list[dict] = []

    def _read(self, deadline: float) -> dict:
        import select

        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("Chromium did not answer in time")
            ready, _, _ = select.select([self._r], [], [], left)
            if ready:
                chunk = os.read(self._r, 1 << 20)
                if not chunk:
                    raise RuntimeError("Chromium closed the DevTools pipe (did it start?)")
                self._buf += chunk
        msg, self._buf = self._buf.split(b"\0", 1)
        return json.loads(msg)

    def send(self, method: str, params: dict | None = None, session: str | None = None) -> dict:
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            m = self._read(deadline)
            if m.get("id") == self._id:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m.get("result", {})
            self.events.append(m)

    def wait_for(self, method: str, session: str) -> None:
        deadline = time.monotonic() + self.timeout
        seen = [e for e in self.events if e.get("method") == method and e.get("sessionId") == session]
        while not seen:
            m = self._read(deadline)
            self.events.append(m)
            if m.get("method") == method and m.get("sessionId") == session:
                return

    def close(self) -> None:
        try:
            self.send("Browser.close")
        except Exception:  # noqa: BLE001 - closing anyway
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        for fd in (self._r, self._w):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)


def _problems(events: Iterable[dict], session: str) -> tuple[list[str], list[str]]:
    console, failed = [], []
    for e in events:
        if e.get("sessionId") != session:
            continue
        m, p = e.get("method"), e.get("params", {})
        if m == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            console.append(f"uncaught: {d.get('exception', {}).get('description') or d.get('text')}")
        elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            console.append("console.error: " + " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", [])))
        elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            console.append(f"log: {p['entry'].get('text')} {p['entry'].get('url', '')}".strip())
        elif m == "Network.loadingFailed" and not p.get("canceled"):
            failed.append(f"{p.get('errorText')} ({p.get('type', '')})")
    return console, failed


def check_pages(pages: Sequence[str | Path], expect: Sequence[str] = (), screenshots: dict | None = None,
                executable: str | None = None, width: int = 1300, timeout: float = 60.0) -> list[PageReport]:
    """Open each page (a file path) in one headless Chromium; ``expect``: element ids (or CSS
    selectors) every page must have; ``screenshots``: {page path: PNG path} to write (the
    whole page, ``width`` px wide)."""
    chrome = find_chromium(executable)
    screenshots = {str(Path(k).resolve()): Path(v) for k, v in (screenshots or {}).items()}
    pipe = _Pipe(chrome, timeout)
    out = []
    try:
        for page in pages:
            path = Path(page).resolve()
            if not path.exists():
                raise InputError(f"no page {path}", fix="render the reports first")
            target = pipe.send("Target.createTarget", {"url": "about:blank"})["targetId"]
            session = pipe.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
            for domain in ("Page", "Runtime", "Log", "Network"):
                pipe.send(f"{domain}.enable", session=session)
            pipe.send("Emulation.setDeviceMetricsOverride",
                      {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": False}, session=session)
            pipe.send("Page.navigate", {"url": path.as_uri()}, session=session)
            pipe.wait_for("Page.loadEventFired", session)
            res = pipe.send("Runtime.evaluate", {"expression": f"{_PAGE_SCRIPT}({json.dumps(list(expect))})",
                                                 "awaitPromise": True, "returnByValue": True}, session=session)
            if "exceptionDetails" in res:
                raise RuntimeError(f"{path}: the page check failed: {res['exceptionDetails']}")
            info = res["result"]["value"]
            console, failed = _problems(pipe.events, session)
            rep = PageReport(str(path), console, failed, info["bad_images"], info["missing"], info["n_images"],
                             info["title"])
            shot = screenshots.get(str(path))
            if shot is not None:
                height = min(int(info["height"]), 16000)
                pipe.send("Emulation.setDeviceMetricsOverride",
                          {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}, session=session)
                png = pipe.send("Page.captureScreenshot", {"format": "png"}, session=session)["data"]
                shot.parent.mkdir(parents=True, exist_ok=True)
                shot.write_bytes(base64.b64decode(png))
                rep.screenshot = str(shot)
            pipe.send("Target.closeTarget", {"targetId": target})
            pipe.events = [e for e in pipe.events if e.get("sessionId") != session]
            out.append(rep)
    finally:
        pipe.close()
    return out
