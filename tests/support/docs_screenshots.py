"""Look at the documentation site in a real browser: screenshots and layout checks.

    python tests/support/docs_screenshots.py [--site DIR] [--out DIR]

Builds the site (``mkdocs build --strict``, unless ``--site`` names a built one), serves it on
127.0.0.1, opens every page in headless Chromium at 1366 px and 390 px wide, saves a full-page PNG
of each under ``--out`` and checks, in the browser, what a reader would see as broken:

- the page scrolls sideways (``scrollWidth > innerWidth``), naming the element that sticks out;
- a code name in a table cell, or a heading, is broken mid-word (``ToolArgsErro|r``);
- the text of a code block runs under its copy button.

It prints one line per finding and exits 1 if there is any. ``tests/project/test_docs.py`` runs the same
check (and skips, saying why, where Chromium is not installed).

Chromium is driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``: NUL-separated
JSON on file descriptors 3 and 4), so the check needs nothing beyond the standard library and a
``chromium`` binary: no port, no websocket client, no Playwright.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import fcntl
import functools
import http.server
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
WIDTHS = (1366, 390)
HEIGHT = {1366: 900, 390: 844}
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
# The flags of a quiet, offline, throwaway browser: no first-run UI, no update or sync traffic.
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",  # CI runs as root, where Chromium's sandbox refuses to start
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",  # so innerWidth is the layout width at every size
    "--remote-debugging-pipe",
)

# Runs in the page once it has loaded (and Material's script has added the copy buttons); returns
# the findings as strings. Kept to three questions a reader would notice, each cheap to answer.
CHECK_JS = r"""
(async () => {
  await document.fonts.ready;
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  const found = [];
  const name = el => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") +
    (el.classList.length ? "." + [...el.classList].join(".") : "");
  const snippet = el => JSON.stringify((el.textContent || "").trim().slice(0, 40));
  const width = window.innerWidth;
  if (document.documentElement.scrollWidth > width) {
    const scrolls = el => {
      for (let p = el.parentElement; p; p = p.parentElement) {
        if (["auto", "scroll", "hidden", "clip"].includes(getComputedStyle(p).overflowX)) return true;
      }
      return false;
    };
    const culprits = [...document.body.querySelectorAll("*")].filter(el =>
      el.getBoundingClientRect().right > width + 1 && !scrolls(el) &&
      ![...el.children].some(c => c.getBoundingClientRect().right > width + 1));
    found.push(`the page scrolls sideways: ${document.documentElement.scrollWidth} px > ${width} px (` +
      culprits.slice(0, 3).map(el => name(el) + " " + snippet(el)).join(", ") + ")");
  }
  // A line may break inside a text node only after a space or a hyphen. Long names get <wbr>
  // between their words (docs/overrides/hooks.py), which splits the text nodes, so a break there
  // is between nodes and allowed; any other break is a name cut mid-word ("ToolArgsErro|r").
  const midWord = node => {
    const text = node.data, range = document.createRange();
    let lastTop = null;
    for (let i = 0; i < text.length; i++) {
      range.setStart(node, i);
      range.setEnd(node, i + 1);
      const rect = range.getClientRects()[0];
      if (!rect) continue;  // collapsed white space
      if (lastTop !== null && rect.top > lastTop + 1 && !/[\s-]/.test(text[i - 1]) && !/\s/.test(text[i])) {
        return true;
      }
      lastTop = rect.top;
    }
    return false;
  };
  const textNodes = el => {
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    const nodes = [];
    while (walker.nextNode()) nodes.push(walker.currentNode);
    return nodes;
  };
  for (const el of document.querySelectorAll(".md-content table code, .md-content :is(h1, h2, h3)")) {
    if (textNodes(el).some(midWord)) found.push(`${el.tagName.toLowerCase()} ${snippet(el)} breaks mid-word`);
  }
  for (const nav of document.querySelectorAll(".md-code__nav")) {
    const button = nav.getBoundingClientRect();
    const code = nav.parentElement.querySelector("pre > code");
    if (!code || button.width === 0) continue;
    const shown = code.getBoundingClientRect();  // the scrolled-away part of a line is not under it
    const range = document.createRange();
    range.selectNodeContents(code);
    const under = [...range.getClientRects()].some(r => {
      const left = Math.max(r.left, shown.left), right = Math.min(r.right, shown.right);
      return r.width > 0 && left < button.right && right > button.left &&
        r.top < button.bottom && r.bottom > button.top;
    });
    if (under) found.push(`text runs under the copy button: ${snippet(code)}`);
  }
  return found;
})()
"""


def find_chromium() -> str | None:
    """The browser to use: ``$FS_TOOLS_CHROMIUM``, else the first of the usual names on PATH."""
    if explicit := os.environ.get("FS_TOOLS_CHROMIUM"):
        return explicit
    return next((path for name in CHROMIUM_NAMES if (path := shutil.which(name))), None)


class Browser:
    """A headless Chromium driven over its DevTools pipe, one page (target) at a time."""

    def __init__(self, executable: str, profile: Path) -> None:
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()

        def wire_fds() -> None:
            # The pipe protocol's fixed descriptors: Chromium reads commands on 3 and answers on 4.
            # Both ends move above 10 first, so putting one on 3 cannot close the other.
            high = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in (to_browser_r, from_browser_w)]
            os.dup2(high[0], 3)
            os.dup2(high[1], 4)

        # close_fds=False: every descriptor Python opens is close-on-exec already, and closing the
        # others (which happens after preexec_fn) would close 3 and 4 again.
        self._process = subprocess.Popen(
            [executable, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "about:blank"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            preexec_fn=wire_fds,
            close_fds=False,
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer = b""
        self._events: list[dict[str, Any]] = []
        self._next_id = 0

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.send("Browser.close", timeout=5)
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        for fd in (self._to_browser, self._from_browser):
            with contextlib.suppress(OSError):
                os.close(fd)
        if self._process.stderr is not None:
            self._process.stderr.close()

    def send(self, method: str, params: dict[str, Any] | None = None, *, session: str | None = None,
             timeout: float = 30) -> dict[str, Any]:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._receive(deadline, method)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return dict(reply.get("result", {}))
            self._events.append(reply)

    def wait_for(self, event: str, *, session: str, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while True:
            for queued in self._events:
                if queued.get("method") == event and queued.get("sessionId") == session:
                    self._events.remove(queued)
                    return
            self._events.append(self._receive(deadline, event))

    def _receive(self, deadline: float, waiting_for: str) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._from_browser], [], [], left)[0]:
                raise TimeoutError(f"Chromium did not answer {waiting_for} in time")
            chunk = os.read(self._from_browser, 1 << 20)
            if not chunk:
                raise RuntimeError(f"Chromium exited while waiting for {waiting_for}: {self._stderr_tail()}")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return dict(json.loads(message))

    def _stderr_tail(self) -> str:
        if self._process.poll() is None or self._process.stderr is None:
            return "(still running)"
        return self._process.stderr.read().decode(errors="replace")[-2000:]

    @contextlib.contextmanager
    def page(self) -> Iterator[str]:
        """A fresh tab; yields its DevTools session id."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        try:
            self.send("Page.enable", session=session)
            yield session
        finally:
            self.send("Target.closeTarget", {"targetId": target})


def inspect(browser: Browser, session: str, url: str, width: int, screenshot: Path | None) -> list[str]:
    """Open ``url`` at ``width`` px, save a full-page PNG to ``screenshot``, return the findings."""
    metrics = {"width": width, "height": HEIGHT.get(width, 900), "deviceScaleFactor": 1, "mobile": False}
    browser.send("Emulation.setDeviceMetricsOverride", metrics, session=session)
    browser.send("Page.navigate", {"url": url}, session=session)
    browser.wait_for("Page.loadEventFired", session=session)
    evaluated = browser.send(
        "Runtime.evaluate", {"expression": CHECK_JS, "awaitPromise": True, "returnByValue": True}, session=session
    )
    if "exceptionDetails" in evaluated:
        raise RuntimeError(f"the layout check failed in {url}: {evaluated['exceptionDetails']}")
    findings = [str(f) for f in evaluated["result"]["value"]]
    if screenshot is not None:
        size = browser.send("Page.getLayoutMetrics", session=session)["cssContentSize"]
        clip = {"x": 0, "y": 0, "width": width, "height": size["height"], "scale": 1}
        shot = browser.send(
            "Page.captureScreenshot",
            {"format": "png", "captureBeyondViewport": True, "clip": clip},
            session=session,
            timeout=60,
        )
        screenshot.write_bytes(base64.b64decode(shot["data"]))
    return findings


@contextlib.contextmanager
def serve(directory: Path) -> Iterator[str]:
    """Serve ``directory`` on 127.0.0.1 (a free port) for the duration; yields the base URL."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(directory)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def pages_of(site: Path) -> list[str]:
    """Every page of a built site, as paths relative to its root ("" for the home page)."""
    pages = []
    for index in sorted(site.rglob("index.html")):
        relative = index.parent.relative_to(site).as_posix()
        if relative.split("/")[0] in ("assets", "search"):
            continue
        pages.append("" if relative == "." else relative + "/")
    return pages


def build_site(destination: Path) -> None:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(destination)],
        cwd=ROOT,
        env=env,
        check=True,
    )


def shot_name(page: str, width: int) -> str:
    return f"{page.strip('/').replace('/', '-') or 'index'}-{width}.png"


def check_site(site: Path, out: Path | None, chromium: str, pages: list[str] | None = None) -> list[str]:
    """Open every page of ``site`` at each width; the findings, each prefixed with the page and width."""
    findings = []
    with tempfile.TemporaryDirectory(prefix="fs-tools-chromium-") as profile, serve(site) as base:
        browser = Browser(chromium, Path(profile))
        try:
            with browser.page() as session:
                for page in pages if pages is not None else pages_of(site):
                    for width in WIDTHS:
                        png = out / shot_name(page, width) if out is not None else None
                        for finding in inspect(browser, session, base + page, width, png):
                            findings.append(f"/{page} at {width} px: {finding}")
        finally:
            browser.close()
    return findings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--site", type=Path, help="a built site (default: build one now)")
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "fs-tools-screenshots")
    args = parser.parse_args(argv)
    chromium = find_chromium()
    if chromium is None:
        print("chromium not found: apt-get install -y chromium (or set FS_TOOLS_CHROMIUM)", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="fs-tools-site-") as built:
        site = args.site or Path(built)
        if args.site is None:
            build_site(site)
        findings = check_site(site, args.out, chromium)
    for finding in findings:
        print(finding)
    print(f"{len(findings)} layout finding(s); screenshots in {args.out}")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
