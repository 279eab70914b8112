"""The browser page in a real headless Chromium (DevTools protocol over WebSocket, no playwright).

A person's view: the page connects by WebSocket, starts a match against every built-in agent,
plays through its buttons (one raise with the bet slider), and the test checks the DOM (hole
cards, board, pot, whose turn, hand history) and a screenshot (a real, non-blank PNG).
Skipped, saying so, when no Chromium is installed (`.ci/run` installs Debian's `chromium`).
"""
from __future__ import annotations

import base64
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))
from platform_helpers import free_port, start_server  # noqa: E402

CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no browser: Chromium is not installed "
                                                          "(apt-get install -y chromium; .ci/run does it)")


class DevTools:
    """A minimal Chrome DevTools Protocol client for one page."""

    def __init__(self, url: str):
        from websockets.sync.client import connect

        self._cm = connect(url, max_size=64 * 2 ** 20, open_timeout=20)
        self.ws = self._cm.__enter__()
        self.next_id = 0

    def call(self, method: str, timeout: float = 30.0, **params):
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            msg = json.loads(self.ws.recv(timeout=timeout))
            if msg.get("id") == self.next_id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
        raise TimeoutError(method)

    def js(self, expression: str):
        res = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in res:
            raise RuntimeError(f"JS error in {expression[:80]!r}: {res['exceptionDetails']}")
        return res["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 60.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = self.js(expression)
            if value:
                return value
            time.sleep(0.05)
        history = self.js("document.getElementById('history').innerText")
        raise TimeoutError(f"page never satisfied {expression!r}; history: {history[-800:]!r}")

    def close(self):
        self._cm.__exit__(None, None, None)


STEP_JS = """(() => {
  const b = (id) => document.getElementById(id);
  if (!b('check').disabled) { b('check').click(); return 'check'; }
  if (!b('call').disabled) { b('call').click(); return 'call'; }
  if (!b('fold').disabled) { b('fold').click(); return 'fold'; }
  return null; })()"""


@pytest.fixture()
def browser(tmp_path):
    port, http_port, debug_port = free_port(), free_port(), free_port()
    server = start_server(str(tmp_path / "b.db"), port, http_port=http_port)
    profile = tmp_path / "chrome"
    chrome = subprocess.Popen([CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                               "--no-first-run", "--window-size=1100,900", f"--remote-debugging-port={debug_port}",
                               f"--user-data-dir={profile}", "about:blank"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    page = None
    try:
        deadline = time.monotonic() + 60
        while page is None and time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{debug_port}/json/list", timeout=2) as r:
                    pages = [t for t in json.load(r) if t.get("type") == "page"]
                if pages:
                    page = pages[0]["webSocketDebuggerUrl"]
            except OSError:
                time.sleep(0.2)
        assert page is not None, "Chromium did not open its DevTools port"
        dt = DevTools(page)
        yield dt, http_port
        dt.close()
    finally:
        chrome.send_signal(signal.SIGTERM)
        try:
            chrome.wait(timeout=10)
        except subprocess.TimeoutExpired:
            chrome.kill()
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=10)


def test_person_plays_every_builtin_agent_in_headless_chromium(browser, tmp_path):
    from PIL import Image

    dt, http_port = browser
    dt.call("Page.enable")
    dt.call("Page.navigate", url=f"http://127.0.0.1:{http_port}/")
    dt.wait_for("document.querySelectorAll('#opponent option').length > 0")
    agents = dt.js("Array.from(document.querySelectorAll('#opponent option')).map(o => o.value)")
    assert set(agents) >= {"random", "always-call", "fixed-range-raiser", "rule-based"}
    shot_checked = False
    for k, agent in enumerate(agents):
        dt.js(f"document.getElementById('opponent').value = {json.dumps(agent)};"
              f"document.getElementById('hands').value = 2; document.getElementById('seed').value = {k + 1};"
              f"document.getElementById('start').click(); true")
        dt.wait_for(f"document.getElementById('status').textContent.includes('{agent}')")
        raised = False
        deadline = time.monotonic() + 120
        while not dt.js("document.getElementById('status').textContent === 'match over'"):
            assert time.monotonic() < deadline, f"match against {agent} did not finish"
            if dt.js("document.getElementById('turn').textContent === 'Your turn'"):
                # the person's view while it is their turn: two hole cards, pot, seats, a button to press
                assert dt.js("document.querySelectorAll('#hole .card[data-card]').length") == 2
                assert int(dt.js("document.getElementById('pot').textContent")) > 0
                assert dt.js("document.querySelectorAll('#seats .seat').length") == 2
                assert dt.js("document.querySelector('#seats .seat.turn') !== null")
                if not shot_checked and dt.js("document.querySelectorAll('#board .card').length >= 3"):
                    # mid-hand, the person's turn: board, hole cards and enabled buttons on the screen
                    assert not (dt.js("document.getElementById('check').disabled") and
                                dt.js("document.getElementById('call').disabled"))
                    png = base64.b64decode(dt.call("Page.captureScreenshot", format="png")["data"])
                    (tmp_path / "page.png").write_bytes(png)
                    img = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))
                    assert img.shape[0] >= 400 and img.shape[1] >= 600
                    colors = len(np.unique(img.reshape(-1, 3)[::7], axis=0))
                    assert colors > 50, f"screenshot looks blank ({colors} colours)"
                    # white card faces and the green table are both on the screen
                    assert (img.reshape(-1, 3) == 255).all(axis=1).sum() > 1000
                    shot_checked = True
                if not raised and not dt.js("document.getElementById('raise').disabled"):
                    # the bet slider: move it to its minimum and raise
                    amount = dt.js("(() => { const a = document.getElementById('amount'); a.value = a.min;"
                                   "a.dispatchEvent(new Event('input')); document.getElementById('raise').click();"
                                   "return parseInt(a.min, 10); })()")
                    assert amount > 0
                    raised = True
                else:
                    assert dt.js(STEP_JS) is not None
            time.sleep(0.05)
        history = dt.js("document.getElementById('history').innerText")
        assert "hand 0 over" in history and "hand 1 over" in history and "match over" in history, history
        assert "error" not in history, history
    assert shot_checked
