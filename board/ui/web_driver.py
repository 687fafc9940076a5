"""textual's web driver (the dashboard served to a browser by ``board web``), made to end with
the connection that carries it and to sleep while nothing comes.

Served, the dashboard is a child process that speaks to the server over its stdin and stdout.
textual's web driver keeps the app running when that stdin ends (its server gone: stopped,
killed, or the browser session closed without a goodbye), and its input thread wakes ten times a
second on an idle session. This one ends the dashboard as soon as stdin ends or stdout is gone,
and waits on stdin (and on a pipe that says stop), waking on time only while a key's escape
sequence waits for its end, as ``board.ui.terminal_driver`` does in a terminal.
``tests/web/test_web.py`` serves it to a real browser and kills its server under it.
"""

from __future__ import annotations

import os
import selectors
import sys
from codecs import getincrementaldecoder
from typing import Any

from textual import messages
from textual._parser import ParseError
from textual._xterm_parser import XTermParser
from textual.drivers._byte_stream import ByteStream
from textual.drivers.web_driver import WebDriver, _ExitInput

from board.ui.terminal_driver import input_wait, wake


class QuietWebDriver(WebDriver):
    """``WebDriver`` whose input thread blocks until input or a stop, and whose app ends when
    the server can no longer be heard or written to."""

    _wake_pipe: tuple[int, int] | None = None
    _gone = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # textual writes through a partial of os.write; this one notices the server gone.
        self._write = self._write_or_end  # type: ignore[assignment]

    def _write_or_end(self, data: bytes) -> int:
        """Write to the server; once it is gone, end the dashboard instead of writing on."""
        if self._gone:
            return len(data)
        try:
            return os.write(self.fileno, data)
        except OSError:  # EPIPE and the like: nobody reads the other end any more
            self._end()
            return len(data)

    def _end(self) -> None:
        if not self._gone:
            self._gone = True
            self._app.post_message(messages.ExitApp())

    def stop_application_mode(self) -> None:
        wake(self._wake_pipe)
        super().stop_application_mode()

    def run_input_thread(self) -> None:
        """Read the server's packets from stdin; the app ends with stdin."""
        self._wake_pipe = os.pipe()
        wake_read = self._wake_pipe[0]
        stdin = sys.__stdin__.fileno()  # type: ignore[union-attr]
        selector = selectors.SelectSelector()
        selector.register(stdin, selectors.EVENT_READ)
        selector.register(wake_read, selectors.EVENT_READ)
        parser = XTermParser(debug=self._debug)
        decode = getincrementaldecoder("utf-8")().decode
        packets = ByteStream()

        try:
            while not self.exit_event.is_set():
                ready = {key.fd for key, _mask in selector.select(input_wait(parser))}
                if wake_read in ready:
                    break
                if stdin in ready:
                    data = os.read(stdin, 4096)
                    if not data:
                        self._end()  # the server closed the connection
                        break
                    for packet_type, payload in packets.feed(data):
                        if packet_type == "D":
                            for event in parser.feed(decode(payload)):
                                self.process_message(event)
                        else:
                            self._on_meta(packet_type, payload)
                for event in parser.tick():
                    self.process_message(event)
        except _ExitInput:
            pass
        except (OSError, ParseError):
            self._end()  # the connection to the server broke
        finally:
            selector.close()
            pipe, self._wake_pipe = self._wake_pipe, None
            if pipe is not None:
                for end in pipe:
                    os.close(end)
