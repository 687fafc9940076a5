"""The dashboard served to web browsers, through textual-serve: each browser session runs
``board ui`` as a process of its own, whose screen and keys travel over a websocket.

What board adds to textual-serve's server:

- **A token.** Every request, the websocket included, must bring it: in the address the server
  prints (``?token=``), which the first request trades for a cookie, or in that cookie. Without
  it the answer is 401 and nothing of the board. The token is new at each start unless
  ``[web] token`` in board.toml names one.
- **The board's name** (and whether it is read-only) as the page's title, not the command line.
- **The sessions end with the server.** Ctrl-C or SIGTERM ends every session's dashboard (asked
  to quit, then killed if it does not); a dashboard whose server dies outright ends by itself
  when its pipes close (``board.ui.web_driver``). The command runs without a shell, so the
  process the server watches is the dashboard itself.
- **One line per event in the log**: the server's start, and each session's start and end.
"""

from __future__ import annotations

import asyncio
import hmac
import secrets
import signal
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import aiohttp_jinja2
from aiohttp import web
from textual_serve.app_service import AppService
from textual_serve.server import Server, to_int

#: The cookie a browser keeps the token in, once it has brought it in the address.
COOKIE = "board_token"
#: How long a session's dashboard has to quit when asked, before it is killed.
QUIT_SECONDS = 3.0
TEMPLATES = Path(__file__).parent / "templates"


def new_token() -> str:
    return secrets.token_urlsafe(24)


class DashboardProcess(AppService):
    """One browser session's dashboard: ``board ui`` started without a shell, asked to quit
    when the session ends, killed if it does not."""

    def __init__(self, argv: list[str], log: Callable[[str], None], **kwargs: Any) -> None:
        super().__init__(" ".join(argv), **kwargs)
        self.argv = argv
        self.log = log

    async def _open_app_process(self, width: int = 80, height: int = 24) -> asyncio.subprocess.Process:
        environment = self._build_environment(width=width, height=height)
        self._process = process = await asyncio.create_subprocess_exec(
            *self.argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=environment,
        )
        assert process.stdin is not None
        self._stdin = process.stdin
        self.log(f"session {self.app_service_id[:8]} started: dashboard pid {process.pid}, {width}x{height}")
        return process

    async def stop(self) -> None:
        # Called by the session's end and by the server's shutdown, maybe both at once.
        process, self._process = self._process, None
        try:
            await asyncio.wait_for(super().stop(), QUIT_SECONDS)
        except (TimeoutError, ConnectionError, RuntimeError):
            pass
        if process is not None:
            if process.returncode is None:
                process.kill()
            await process.wait()
            self.log(f"session {self.app_service_id[:8]} ended: dashboard pid {process.pid} exited ({process.returncode})")


class BoardWebServer(Server):
    """textual-serve's server for one workspace's dashboard, behind a token."""

    def __init__(self, argv: list[str], *, title: str, host: str, port: int, token: str, public_url: str | None = None, log: Callable[[str], None]) -> None:
        super().__init__(" ".join(argv), host=host, port=port, title=title, public_url=public_url, templates_path=TEMPLATES)
        self.argv = argv
        self.token = token
        self.given_public_url = public_url
        self.log = log
        self.sessions: set[DashboardProcess] = set()
        self.listening = False

    def initialize_logging(self) -> None:
        """The server's own log is ``self.log``'s lines; textual-serve's banner is left out."""

    def address(self) -> str:
        """Where a browser opens the board, token included: printed once, at the start."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        base = self.given_public_url or f"http://{host}:{self.port}"
        return f"{base.rstrip('/')}/?token={self.token}"

    async def on_startup(self, app: web.Application) -> None:
        """(Said once listening: ``serve``.)"""

    def serve(self, debug: bool = False) -> None:
        """textual-serve's ``serve``, saying where the board is once the port listens."""
        self.debug = debug
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        for stop in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(stop, self.request_exit)
        web.run_app(
            self._make_app(), host=self.host, port=self.port, handle_signals=False, loop=loop,
            print=lambda *_: self._listening(),
        )  # fmt: skip

    def _listening(self) -> None:
        self.listening = True
        self.log(f"serving {self.title} at {self.address()}")

    async def on_shutdown(self, app: web.Application) -> None:
        await asyncio.gather(*(session.stop() for session in list(self.sessions)), return_exceptions=True)
        if self.listening:
            self.log("stopped")

    async def _make_app(self) -> web.Application:
        app = await super()._make_app()
        app.middlewares.append(self._require_token)
        return app

    @web.middleware
    async def _require_token(self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]) -> web.StreamResponse:
        given = request.query.get("token")
        if given is not None and hmac.compare_digest(given.encode(), self.token.encode()):
            # Traded for a cookie, and taken out of the address (and so of the history).
            query = {key: value for key, value in request.query.items() if key != "token"}
            response = web.HTTPFound(request.rel_url.with_query(query))
            response.set_cookie(COOKIE, self.token, httponly=True, samesite="Strict", path="/")
            return response
        kept = request.cookies.get(COOKIE)
        if kept is None or not hmac.compare_digest(kept.encode(), self.token.encode()):
            return web.Response(status=401, text="board web: this board needs its token: open the address the server printed when it started\n")
        origin = request.headers.get("Origin")
        if origin is not None and not self._same_origin(origin, request):
            # A page of another site driving a visitor's session (its cookie is not sent there
            # by today's browsers, SameSite=Strict; an older one might).
            return web.Response(status=403, text="board web: a page of another site may not use this board\n")
        return await handler(request)

    def _same_origin(self, origin: str, request: web.Request) -> bool:
        allowed = {f"{request.scheme}://{request.host}"}
        if self.given_public_url:
            public = urlsplit(self.given_public_url)
            allowed.add(f"{public.scheme}://{public.netloc}")
        return origin.rstrip("/") in allowed

    @aiohttp_jinja2.template("app_index.html")
    async def handle_index(self, request: web.Request) -> dict[str, Any]:
        """The page, its websocket on the host the browser used (a cookie is kept per host)."""
        base = self.given_public_url.rstrip("/") if self.given_public_url else f"{request.scheme}://{request.host}"
        websocket = ("wss:" if base.startswith("https") else "ws:") + base.split(":", 1)[1] + str(request.app.router["websocket"].url_for())
        return {
            "font_size": to_int(request.query.get("fontsize", "0"), 0),
            "app_websocket_url": websocket,
            "config": {"static": {"url": base + str(request.app.router["static"].url_for(filename="/")).rstrip("/") + "/"}},
            "application": {"name": self.title},
        }

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        """A browser session: its own dashboard process, for as long as the websocket lasts."""
        websocket = web.WebSocketResponse(heartbeat=15)
        width = max(20, min(500, to_int(request.query.get("width", "80"), 80)))
        height = max(8, min(300, to_int(request.query.get("height", "24"), 24)))
        session: DashboardProcess | None = None
        try:
            await websocket.prepare(request)
            session = DashboardProcess(
                self.argv, self.log,
                write_bytes=websocket.send_bytes, write_str=websocket.send_str, close=websocket.close,
                download_manager=self.download_manager, debug=self.debug,
            )
            self.sessions.add(session)
            await session.start(width, height)
            await self._process_messages(websocket, session)
        except asyncio.CancelledError:
            await websocket.close()
        except Exception as error:  # noqa: BLE001 - one session's failure must not end the server
            self.log(f"session failed: {error!r}")
        finally:
            if session is not None:
                await session.stop()
                self.sessions.discard(session)
        return websocket


def serve(argv: list[str], *, title: str, host: str, port: int, token: str, public_url: str | None = None) -> int:
    """Serve the dashboard ``argv`` starts until Ctrl-C or SIGTERM."""

    def log(line: str) -> None:
        sys.stdout.write(f"board web: {line}\n")
        sys.stdout.flush()

    server = BoardWebServer(argv, title=title, host=host, port=port, token=token, public_url=public_url, log=log)
    server.serve()
    return 0
