"""``board web`` as a person uses it: the server started as a command, Debian's Chromium driving
the page headless (keys typed into the page's terminal, the screen read from what the page
received), the board on disk checked; the token, the read-only view, and no dashboard left
behind however the server ends.

The screen is drawn on a canvas, so a test reads what the page was sent instead: a script put
into the page before its own records every websocket message it receives.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.pg_cluster import free_port

CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
    pytest.skip("Debian's Chromium is not installed (apt-get install chromium chromium-driver)", allow_module_level=True)
webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed: pip install 'board[test]'")
from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402

#: Every websocket message the page receives, as text, in ``window.__received``.
RECORD_RECEIVED = """
window.__received = [];
const RealWebSocket = window.WebSocket;
window.WebSocket = function (...args) {
  const socket = new RealWebSocket(...args);
  socket.addEventListener("message", (event) => {
    if (typeof event.data === "string") window.__received.push(event.data);
    else if (event.data instanceof Blob) event.data.text().then((text) => window.__received.push(text));
    else window.__received.push(new TextDecoder().decode(event.data));
  });
  return socket;
};
window.WebSocket.prototype = RealWebSocket.prototype;
Object.assign(window.WebSocket, RealWebSocket);
"""
ESCAPES = re.compile(r"\x1b(\[[0-9;?<>=$]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[@-Z\\-_])")
TIMEOUT = 60.0


def wait_for(condition: Callable[[], object], what: str, timeout: float = TIMEOUT) -> object:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


class WebServer:
    """``board web`` running as a command, its log collected line by line as it comes."""

    def __init__(self, workspace: Path, *args: str) -> None:
        self.port = free_port()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "board", "web", str(workspace), "--port", str(self.port), *args],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )  # fmt: skip
        self.lines: list[str] = []
        threading.Thread(target=self._collect, daemon=True).start()
        wait_for(lambda: self.lines or self.process.poll() is not None, "the server's first line")
        found = re.search(r"http://\S+", self.lines[0] if self.lines else "")
        assert found, "".join(self.lines)
        self.address = found[0]
        self.token = self.address.split("token=")[1]

    def _collect(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line)

    def log_matches(self, pattern: str, count: int = 1) -> list[re.Match[str]]:
        """The first ``count`` log lines matching ``pattern``, once there are that many."""
        def found() -> list[re.Match[str]] | None:
            matches = [m for m in (re.search(pattern, line) for line in list(self.lines)) if m]
            return matches[:count] if len(matches) >= count else None

        return wait_for(found, f"{count} log line(s) like {pattern!r}")  # type: ignore[return-value]

    def dashboard_pids(self, count: int) -> list[int]:
        """The pids of the first ``count`` sessions' dashboards, from the log."""
        return [int(m[1]) for m in self.log_matches(r"session \w+ started: dashboard pid (\d+)", count)]

    def local(self, path: str = "/") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        # Its sessions' dashboards too, should a test have failed with one left running.
        for line in list(self.lines):
            found = re.search(r"dashboard pid (\d+)", line)
            if found and not gone(int(found[1])):
                os.kill(int(found[1]), signal.SIGKILL)


@pytest.fixture
def serve() -> Iterator[Callable[..., WebServer]]:
    servers: list[WebServer] = []

    def start(workspace: Path, *args: str) -> WebServer:
        servers.append(WebServer(workspace, *args))
        return servers[-1]

    yield start
    for server in servers:
        server.stop()


class Page:
    """One headless Chromium showing the page."""

    def __init__(self, address: str, width: int, height: int, *, mobile: bool = False) -> None:
        options = webdriver.ChromeOptions()
        options.binary_location = str(CHROMIUM)
        for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", f"--window-size={width},{height}"):
            options.add_argument(argument)
        if mobile:
            options.add_experimental_option("mobileEmulation", {"deviceMetrics": {"width": width, "height": height, "pixelRatio": 1.0}})
        self.driver = webdriver.Chrome(service=webdriver.ChromeService(str(CHROMEDRIVER)), options=options)
        self.driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": RECORD_RECEIVED})
        self.driver.get(address)

    def screen_text(self) -> str:
        """Everything the page was sent, escape codes taken out."""
        received = self.driver.execute_script("return (window.__received || []).join('')")
        return ESCAPES.sub("", received)

    def sees(self, text: str, timeout: float = TIMEOUT) -> None:
        wait_for(lambda: text in self.screen_text(), f"{text!r} on the page")

    def type(self, *keys: str) -> None:
        """Keys typed into the page's terminal, as a person types them. (Focused without a
        click: a click is a mouse event the dashboard acts on.)"""
        self.driver.execute_script("document.querySelector('.xterm-helper-textarea').focus()")
        for key in keys:
            ActionChains(self.driver).send_keys(key).perform()
            # A person's pace: each key its own message. A lone Escape is told from the start
            # of an escape sequence (alt+key) by the pause after it.
            time.sleep(0.4 if key == Keys.ESCAPE else 0.05)

    def close(self) -> None:
        self.driver.quit()


@pytest.fixture
def pages() -> Iterator[Callable[..., Page]]:
    opened: list[Page] = []

    def open_page(address: str, width: int = 1400, height: int = 900, **kwargs: bool) -> Page:
        opened.append(Page(address, width, height, **kwargs))
        return opened[-1]

    yield open_page
    for page in opened:
        try:
            page.close()
        except Exception:  # noqa: BLE001 - closed by the test already
            pass


def on_disk(workspace: Path, task_id: str) -> dict:
    return json.loads((workspace / ".tasks" / f"task_{task_id}.json").read_text())


def save_screenshot(page: Page, name: str, tmp_path: Path) -> Path:
    """Kept in the test's folder, and in ``$BOARD_SCREENSHOTS`` when set (to look at)."""
    path = tmp_path / f"{name}.png"
    page.driver.save_screenshot(str(path))
    if os.environ.get("BOARD_SCREENSHOTS"):
        Path(os.environ["BOARD_SCREENSHOTS"]).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(os.environ["BOARD_SCREENSHOTS"]) / path.name)
    return path


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().split(")")[-1].split()[0] == "Z"  # exited, not yet reaped


# -- tests --------------------------------------------------------------------------------------


def test_a_person_starts_a_task_from_the_browser_and_a_second_browser_sees_it(sample: Path, serve, pages, tmp_path: Path) -> None:
    server = serve(sample)
    first = pages(server.address)
    first.sees("Benchmark the JSON")  # #32, the first ready task, selected
    assert first.driver.title == f"board · {sample.name}"
    second = pages(server.address)
    second.sees("3 in progress")
    first.type(Keys.ENTER)
    first.sees("Compare the stdlib encoder")  # the details of #32: its description
    first.type(Keys.ESCAPE, "s")
    wait_for(lambda: on_disk(sample, "32")["status"] == "in_progress", "#32 started on disk")
    second.sees("4 in progress")  # live, in the other session
    first.type("/")
    first.sees("status:ready  priority:high")  # the filter's prompt, ready for the words
    first.type("dockerfile", Keys.ENTER)
    first.sees("filter: dockerfile")
    save_screenshot(first, "desktop", tmp_path)
    assert len(server.dashboard_pids(2)) == 2  # a dashboard of its own for each browser


def test_on_a_phone_one_lane_shows_and_the_footer_keys_are_there_to_tap(sample: Path, serve, pages, tmp_path: Path) -> None:
    server = serve(sample)
    phone = pages(server.address, 390, 844, mobile=True)
    phone.sees("Benchmark the JSON")
    columns = int(server.log_matches(r"session \w+ started: dashboard pid \d+, (\d+)x\d+")[0][1])
    assert columns < 80
    # The page's terminal fits the phone's screen: no column off its right edge.
    fits = "return document.querySelector('.xterm-screen').getBoundingClientRect().right <= window.innerWidth"
    assert phone.driver.execute_script(fits)
    phone.type("]")  # focused, the board offers its lane keys in the footer
    phone.sees("◀ Lane")
    phone.sees("In progress")
    save_screenshot(phone, "phone", tmp_path)


def test_without_the_token_nothing_is_served_even_bound_beyond_this_machine(sample: Path, serve) -> None:
    server = serve(sample, "--host", "0.0.0.0")
    for path in ("/", "/ws", "/static/js/textual.js", "/?token=wrong"):
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(server.local(path), timeout=10)
        assert refused.value.code == 401
        assert b"Benchmark" not in refused.value.read()
    # With it, the first request trades it for a cookie, which the next ones bring.
    browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
    with browser.open(server.local(f"/?token={server.token}"), timeout=10) as page:
        assert page.status == 200 and page.url == server.local("/")  # the token taken out of the address
        assert f"<title>board · {sample.name}</title>".encode() in page.read()
    with browser.open(server.local("/static/js/textual.js"), timeout=10) as script:
        assert script.status == 200


def test_the_read_only_view_refuses_a_key_and_changes_nothing(sample: Path, serve, pages) -> None:
    before = on_disk(sample, "32")
    server = serve(sample, "--readonly")
    page = pages(server.address)
    page.sees("Benchmark the JSON")
    page.sees("READ-ONLY")  # in the dashboard's header
    assert page.driver.title.endswith("read-only")
    page.type("s", "?")  # start #32, then help: once help shows, the start was taken or refused
    page.sees("(read-only)")  # help marks the keys that would write
    assert on_disk(sample, "32") == before


@pytest.mark.parametrize("ending", [signal.SIGTERM, signal.SIGKILL])
def test_no_dashboard_outlives_its_server(sample: Path, serve, pages, ending: signal.Signals) -> None:
    server = serve(sample)
    page = pages(server.address)
    page.sees("Benchmark the JSON")
    (dashboard,) = server.dashboard_pids(1)
    server.process.send_signal(ending)
    server.process.wait(timeout=TIMEOUT)
    wait_for(lambda: gone(dashboard), f"the dashboard (pid {dashboard}) to end after {ending.name}")


def test_a_browser_closed_mid_session_leaves_no_dashboard_behind(sample: Path, serve, pages) -> None:
    server = serve(sample)
    page = pages(server.address)
    page.sees("Benchmark the JSON")
    (dashboard,) = server.dashboard_pids(1)
    page.driver.quit()
    wait_for(lambda: gone(dashboard), f"the dashboard (pid {dashboard}) to end with its browser")
    assert server.process.poll() is None  # the server serves on
    server.log_matches(rf"session \w+ ended: dashboard pid {dashboard} exited")


def test_a_page_of_another_site_cannot_use_a_visitors_session(sample: Path, serve) -> None:
    server = serve(sample)
    browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
    browser.open(server.local(f"/?token={server.token}"), timeout=10).close()  # the visitor's cookie
    elsewhere = urllib.request.Request(server.local("/ws"), headers={"Origin": "http://evil.example"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        browser.open(elsewhere, timeout=10)
    assert refused.value.code == 403
    here = urllib.request.Request(server.local("/"), headers={"Origin": server.local("").rstrip("/")})
    with browser.open(here, timeout=10) as page:
        assert page.status == 200


def test_a_board_in_postgresql_is_served_and_driven_alike(sample: Path, pg_url: str, serve, pages, monkeypatch) -> None:
    from board.store.postgres.connect import connect
    from board.store.postgres.migrations import migrate
    from board.store.postgres.store import PostgresStore
    from board.store.postgres.transfer import import_board

    with connect(pg_url, autocommit=True) as conn:
        migrate(conn)
    import_board(pg_url, sample)
    workspace = sample.parent / "elsewhere"
    workspace.mkdir()
    monkeypatch.setenv("BOARD_DB", pg_url)
    server = serve(workspace)
    page = pages(server.address)
    page.sees("Benchmark the JSON")
    page.type("s")

    def started() -> bool:
        store = PostgresStore.open(workspace, url=pg_url, whole=False)
        try:
            return store.get("32").status == "in_progress"
        finally:
            store.close()

    wait_for(started, "#32 started in the database")
