"""Following the board while ``board mcp`` runs, and telling clients what changed.

The store's follower (``Store.follow``: a watcher on a board in files, the server's
notifications on a database board) keeps the server's index current with what other processes
write, and after each batch the resources clients watch are read again: a client is told when
what it would read is different.

Clients watch in one of two ways. A 2025-era client (what Claude Code, Codex, Gemini CLI and
Cursor speak today) sends ``resources/subscribe`` and hears ``notifications/resources/updated``
on its connection; a 2026-era client opens a ``subscriptions/listen`` stream naming the
addresses in its filter. Both are counted here, per address.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Any

import anyio
import anyio.from_thread
import anyio.to_thread
from anyio.abc import TaskGroup
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.session import ServerSession
from mcp.server.subscriptions import InMemorySubscriptionBus, ResourceUpdated
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS, EmptyResult, SubscribeRequestParams, SubscriptionsListenRequestParams, UnsubscribeRequestParams
from pydantic import ValidationError

from board.errors import BoardError

from board.mcp.served import PROMPT_URI, ServedBoard, task_of_uri

if TYPE_CHECKING:
    from mcp.server import MCPServer

log = logging.getLogger(__name__)


class BoardFollower:
    """The watched addresses, what each read last, and the file watcher that follows the board."""

    def __init__(self, board: ServedBoard) -> None:
        self.board = board
        #: Where 2026-era listen streams hear of changes.
        self.bus = InMemorySubscriptionBus()
        self._streams: dict[str, int] = {}
        #: 2025-era subscriptions: the connection that asked, by address. (A subscription is
        #: idempotent there, and stdio carries one connection.)
        self._subscribed: dict[str, ServerSession] = {}
        #: What each watched address read last (None: no such task).
        self._last: dict[str, str | None] = {}
        #: Set when the server ends: following the board stops.
        self._stopped = threading.Event()

    def start_in(self, tasks: TaskGroup) -> None:
        """Follow the board from now on, in a thread of ``tasks`` (the watcher blocks)."""
        tasks.start_soon(self._follow_in_thread)

    def stop(self) -> None:
        self._stopped.set()

    def problem_with(self, uri: str) -> str | None:
        """Why ``uri`` names no board resource, or None."""
        if uri == PROMPT_URI:
            return None
        try:
            task_of_uri(uri)
        except BoardError as error:
            return str(error)
        return None

    # -- who watches what (called on the event loop) -------------------------------------------

    async def subscribe(self, uri: str, connection: ServerSession) -> None:
        await anyio.to_thread.run_sync(self._watch, [uri], connection)

    async def unsubscribe(self, uri: str) -> None:
        await anyio.to_thread.run_sync(self._unwatch, [uri], True)

    async def open_stream(self, uris: list[str]) -> None:
        await anyio.to_thread.run_sync(self._watch, uris, None)

    async def close_stream(self, uris: list[str]) -> None:
        await anyio.to_thread.run_sync(self._unwatch, uris, False)

    def _watched(self, uri: str) -> bool:
        return uri in self._subscribed or self._streams.get(uri, 0) > 0

    def _watch(self, uris: list[str], connection: ServerSession | None) -> None:
        # What the address reads now is the baseline: a change after this call is told.
        with self.board.fresh():
            for uri in uris:
                if not self._watched(uri):
                    self._last[uri] = self.board.render(uri)
                if connection is not None:
                    self._subscribed[uri] = connection
                else:
                    self._streams[uri] = self._streams.get(uri, 0) + 1

    def _unwatch(self, uris: list[str], subscribed: bool) -> None:
        with self.board.lock:
            for uri in uris:
                if subscribed:
                    self._subscribed.pop(uri, None)
                elif self._streams.get(uri, 0) > 1:
                    self._streams[uri] -= 1
                else:
                    self._streams.pop(uri, None)
                if not self._watched(uri):
                    self._last.pop(uri, None)

    # -- following the board -------------------------------------------------------------------

    async def _follow_in_thread(self) -> None:
        await anyio.to_thread.run_sync(self._follow_batches, abandon_on_cancel=True)

    def _follow_batches(self) -> None:
        for news in self.board.store.follow(stop=self._stopped, guard=self.board.lock):
            if news.lost is not None:
                log.warning("%s; reconnecting", news.lost)
                continue
            try:
                with self.board.lock:
                    self.board.agents.flush()
                    changed = self._reread_watched(bool(news.changes) or news.whole)
            except (BoardError, OSError) as error:  # a board being rewritten under us: the next batch reads it again
                log.warning("could not read the board's changes: %s", error)
                continue
            if not changed:
                continue
            try:
                anyio.from_thread.run(self._tell, changed)
            except Exception:  # the server is ending: nobody is left to tell
                return

    def _reread_watched(self, moved: bool) -> list[tuple[str, ServerSession | None]]:
        """Under the board's lock: the watched addresses that read differently now."""
        if not (moved or self.board.touched):
            return []
        self.board.touched = False
        changed = []
        for uri in [u for u in self._last if self._watched(u)]:
            now = self.board.render(uri)
            if now != self._last[uri]:
                self._last[uri] = now
                changed.append((uri, self._subscribed.get(uri)))
        return changed

    async def _tell(self, changed: list[tuple[str, ServerSession | None]]) -> None:
        for uri, connection in changed:
            await self.bus.publish(ResourceUpdated(uri=uri))
            if connection is not None:
                await connection.send_resource_updated(uri)


def follow_listen_streams(follower: BoardFollower) -> Any:
    """A middleware that counts the board addresses each ``subscriptions/listen`` stream watches,
    for as long as the stream is open (the SDK's listen handler runs until it closes)."""

    async def watching(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method != "subscriptions/listen":
            return await call_next(ctx)
        try:
            params = SubscriptionsListenRequestParams.model_validate(ctx.params or {}, by_name=False)
        except ValidationError:
            return await call_next(ctx)  # the SDK refuses it
        uris = [uri for uri in params.notifications.resource_subscriptions or () if follower.problem_with(uri) is None]
        await follower.open_stream(uris)
        try:
            return await call_next(ctx)
        finally:
            with anyio.CancelScope(shield=True):
                await follower.close_stream(uris)

    return watching


def serve_legacy_subscriptions(server: MCPServer, follower: BoardFollower) -> None:
    """Serve 2025-era ``resources/subscribe`` and ``resources/unsubscribe``."""

    async def subscribe(ctx: ServerRequestContext[Any, Any], params: SubscribeRequestParams) -> EmptyResult:
        uri = str(params.uri)
        problem = follower.problem_with(uri)
        if problem is not None:
            raise MCPError(INVALID_PARAMS, problem)
        await follower.subscribe(uri, ctx.session)
        return EmptyResult()

    async def unsubscribe(ctx: ServerRequestContext[Any, Any], params: UnsubscribeRequestParams) -> EmptyResult:
        await follower.unsubscribe(str(params.uri))
        return EmptyResult()

    # MCPServer has no public way yet to serve these; the SDK's migration guide registers them on
    # its low-level server like this.
    lowlevel = server._lowlevel_server
    lowlevel.add_request_handler("resources/subscribe", SubscribeRequestParams, subscribe)
    lowlevel.add_request_handler("resources/unsubscribe", UnsubscribeRequestParams, unsubscribe)
