"""A small Chrome DevTools Protocol client over a websocket, driving Debian's headless Chromium.

No driver binary and no browser download: Chromium is started with a fresh profile and
`--remote-debugging-port=0`, its page target is reached over loopback, and every event the
page emits (console, exceptions, log entries, network requests, dialogs) is kept in `events`.
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import time
from contextlib import ExitStack, contextmanager
from pathlib import Path
from urllib.request import urlopen

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--remote-debugging-port=0",
    "--remote-allow-origins=*",
    "--window-size=1280,1600",
)
INSTALL = "apt-get install -y chromium (Debian) and pip install websockets"


def chromium_binary() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@contextmanager
def opened(page: Path, profile: Path, domains: tuple[str, ...] = ("Page",)):
    """A headless Chromium showing the file `page` once loaded, with `domains` enabled first;
    a missing Chromium fails the test, saying how to install it."""
    import pytest

    binary = chromium_binary()
    if binary is None:
        pytest.fail(f"headless Chromium is not installed: {INSTALL}")
    browser = Chromium(profile, binary)
    try:
        for domain in domains:
            browser.send(f"{domain}.enable")
        browser.send("Page.navigate", url=page.as_uri())
        browser.wait_for("Page.loadEventFired")
        browser.settle()
        yield browser
    finally:
        browser.close()


class Chromium:
    def __init__(self, profile: Path, binary: str):
        self.process = subprocess.Popen(
            [binary, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.events: list[dict] = []
        self._next_id = 0
        self._stack = ExitStack()
        self.socket = self._stack.enter_context(
            self._connect(_devtools_port(profile, self.process))
        )

    def _connect(self, port: int):
        from websockets.sync.client import connect

        with urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as response:
            page = next(t for t in json.load(response) if t["type"] == "page")
        return connect(page["webSocketDebuggerUrl"], max_size=None, open_timeout=10)

    def send(self, method: str, **params) -> dict:
        """Call a CDP method and return its result; events that arrive meanwhile are kept."""
        self._next_id += 1
        call_id = self._next_id
        self.socket.send(json.dumps({"id": call_id, "method": method, "params": params}))
        while True:
            message = self._receive(30.0)
            if message.get("id") == call_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})

    def _receive(self, timeout: float) -> dict:
        message = json.loads(self.socket.recv(timeout=timeout))
        if "method" in message:
            self.events.append(message)
            if (
                message["method"] == "Page.javascriptDialogOpening"
            ):  # never let a dialog block the page
                self._next_id += 1
                self.socket.send(
                    json.dumps(
                        {
                            "id": self._next_id,
                            "method": "Page.handleJavaScriptDialog",
                            "params": {"accept": True},
                        }
                    )
                )
        return message

    def wait_for(self, method: str, timeout: float = 30.0) -> dict:
        deadline = time.monotonic() + timeout
        while not any(e["method"] == method for e in self.events):
            self._receive(max(deadline - time.monotonic(), 0.01))
        return next(e for e in self.events if e["method"] == method)

    def settle(self, seconds: float = 0.5) -> None:
        """Collect whatever the page still emits for a short while."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            try:
                self._receive(left)
            except TimeoutError:
                return

    def evaluate(self, expression: str):
        result = self.send(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression!r} raised {result['exceptionDetails']}")
        return result["result"].get("value")

    def click(self, selector: str) -> None:
        """A real mouse click (pressed and released) at the centre of the element."""
        box = self.evaluate(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)}); "
            "e.scrollIntoView(); const r = e.getBoundingClientRect(); return [r.x + r.width / "
            f"2, r.y + r.height / 2]; }})()"
        )
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.send(
                "Input.dispatchMouseEvent",
                type=kind,
                x=box[0],
                y=box[1],
                button="left",
                clickCount=1,
            )

    def screenshot(self, path: Path, height: float | None = None) -> Path:
        """The page from its top: `height` px of it (default: all of it, at most 16,000 px)."""
        size = self.send("Page.getLayoutMetrics")["cssContentSize"]
        clip = {
            "x": 0,
            "y": 0,
            "width": size["width"],
            "height": min(size["height"], height or 16000),
            "scale": 1,
        }
        data = self.send(
            "Page.captureScreenshot", format="png", captureBeyondViewport=True, clip=clip
        )["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def named(self, *methods: str) -> list[dict]:
        return [e["params"] for e in self.events if e["method"] in methods]

    def close(self) -> None:
        try:
            self._stack.close()
        finally:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()


def _devtools_port(profile: Path, process: subprocess.Popen, timeout: float = 30.0) -> int:
    """Chromium writes its debugging port in the profile's DevToolsActivePort once it listens."""
    marker = profile / "DevToolsActivePort"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"chromium exited with {process.returncode} before listening")
        if marker.exists() and marker.read_text().strip():
            return int(marker.read_text().splitlines()[0])
        time.sleep(0.05)
    raise RuntimeError("chromium did not open its debugging port in time")


def loaded(report: Path, profile: Path):
    """`opened` with console, log and network events on, as a generator for a pytest fixture
    (`yield from loaded(...)`)."""
    with opened(report, profile, ("Page", "Runtime", "Log", "Network")) as browser:
        yield browser
