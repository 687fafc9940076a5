"""A TCP proxy that can make a link slow: the stand-in for ``tc netem`` on kernels without it.

``DelayingProxy(listen, target)`` accepts on ``listen`` (an address a machine reaches) and
forwards each connection to ``target``. While ``delay`` is above zero every chunk waits that long
before it is passed on, in both directions and in order, as on a link with that latency;
``drop_connections()`` resets every connection at once. It runs an asyncio loop in a thread of
its own, so a test drives it with plain calls::

    with DelayingProxy(("10.64.1.1", 0), ("127.0.0.1", 5432)) as proxy:
        url = f"postgresql://...@10.64.1.1:{proxy.port}/db"
        proxy.delay = 2.0
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time
from concurrent.futures import Future

#: The read size: a chunk is what one read returns, up to this.
CHUNK_BYTES = 65536


class DelayingProxy:
    """Forwards ``listen`` to ``target``, each chunk held back ``delay`` seconds."""

    def __init__(self, listen: tuple[str, int], target: tuple[str, int]) -> None:
        self.listen = listen
        self.target = target
        #: Seconds each chunk is held back, decided when it arrives (so order is kept when the
        #: delay changes: a chunk never overtakes one that arrived before it).
        self.delay = 0.0
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="delaying-proxy", daemon=True)
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()
        self._writers: set[asyncio.StreamWriter] = set()

    # -- driven from the test's thread ------------------------------------------------------

    def start(self) -> DelayingProxy:
        self._thread.start()
        self._call(self._serve()).result(timeout=30)
        return self

    @property
    def open_connections(self) -> int:
        """How many connections it carries now (one a client closed goes once the proxy saw it)."""
        return len(self._connections)

    def drop_connections(self) -> int:
        """Reset every open connection (both sides see it at once); returns how many."""
        return self._call(self._drop()).result(timeout=30)

    def close(self) -> None:
        if not self._thread.is_alive():
            return
        with contextlib.suppress(Exception):
            self._call(self._shut()).result(timeout=30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=30)
        self._loop.close()

    def __enter__(self) -> DelayingProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _call(self, coroutine) -> Future:  # noqa: ANN001
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop)

    # -- inside the loop ---------------------------------------------------------------------

    async def _serve(self) -> None:
        self._server = await asyncio.start_server(self._accept, *self.listen, reuse_address=True)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _accept(self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        try:
            try:
                server_reader, server_writer = await asyncio.open_connection(*self.target)
            except OSError:
                _reset(client_writer)
                return
            self._writers |= {client_writer, server_writer}
            try:
                await asyncio.gather(self._pipe(client_reader, server_writer), self._pipe(server_reader, client_writer))
            finally:
                for writer in (client_writer, server_writer):
                    self._writers.discard(writer)
                    writer.close()
        finally:
            self._connections.discard(task)

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Copy one direction through a queue, each chunk sent no sooner than it is due."""
        queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

        async def receive() -> None:
            try:
                while chunk := await reader.read(CHUNK_BYTES):
                    queue.put_nowait((time.monotonic() + self.delay, chunk))
            except (ConnectionError, OSError):
                pass
            queue.put_nowait((0.0, b""))

        async def send() -> None:
            while True:
                due, chunk = await queue.get()
                if not chunk:
                    break
                wait = due - time.monotonic()
                if wait > 0:
                    await asyncio.sleep(wait)
                writer.write(chunk)
                await writer.drain()
            with contextlib.suppress(OSError):
                if writer.can_write_eof():
                    writer.write_eof()

        receiving = asyncio.ensure_future(receive())
        try:
            await send()
        except (ConnectionError, OSError):
            pass
        finally:
            receiving.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await receiving

    async def _drop(self) -> int:
        # Aborting both transports ends both pipes of each connection by themselves.
        dropped = len(self._connections)
        for writer in list(self._writers):
            _reset(writer)
        return dropped

    async def _shut(self) -> None:
        if self._server is not None:
            self._server.close()
        await self._drop()
        if self._connections:  # let them finish, so none is destroyed pending with the loop
            await asyncio.wait(set(self._connections), timeout=5)


def _reset(writer: asyncio.StreamWriter) -> None:
    """Close with a RST rather than a FIN: the peer learns at once that the connection is gone."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    writer.transport.abort()
