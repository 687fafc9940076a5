"""textual's Linux terminal driver, with an input thread that sleeps until there is input.

textual's own input thread wakes ten times a second, to see whether it should stop and whether
an escape sequence typed half-way has waited long enough to count as the Escape key. On an idle
dashboard those wakes were two fifths of its CPU. This one waits on the terminal and on a pipe
that says stop, and wakes on time only while a sequence waits for its end.

The loop is textual's (``LinuxDriver.run_input_thread``, textual 8), with those two changes;
``tests/ui/test_terminal_driver.py`` drives it in a real terminal.
"""

from __future__ import annotations

import os
import selectors
from codecs import getincrementaldecoder

from textual._loop import loop_last
from textual._parser import ParseError
from textual._time import get_time
from textual._xterm_parser import XTermParser
from textual.drivers.linux_driver import LinuxDriver

#: How long a half-typed escape sequence is waited on at most between looks, should the
#: parser not say when it gives up (it does: this only bounds a wait).
SEQUENCE_LOOK_SECONDS = 0.1


def input_wait(parser: XTermParser) -> float | None:
    """How long an input thread may sleep: for ever (None) unless a half-typed sequence waits
    on its timeout."""
    due = parser._timeout_time
    if due is None:
        return None
    return min(SEQUENCE_LOOK_SECONDS, max(0.0, due - get_time()))


def wake(pipe: tuple[int, int] | None) -> None:
    """Wake an input thread that sleeps on ``pipe``'s read end, to stop."""
    if pipe is not None:
        try:
            os.write(pipe[1], b"x")
        except OSError:
            pass


def _positive(text: str | None) -> int:
    """A positive whole number written in ``text``, else 0."""
    try:
        return max(0, int(text or ""))
    except ValueError:
        return 0


class QuietLinuxDriver(LinuxDriver):
    """``LinuxDriver`` whose input thread blocks until a key, a stop, or a sequence's timeout."""

    #: The pipe that wakes the input thread to stop (read end, write end), for the driver's life.
    _wake_pipe: tuple[int, int] | None = None
    _stop_reading = False

    def _get_terminal_size(self) -> tuple[int, int]:
        """The size of the terminal it draws on. textual draws on stderr but asks stdout's size
        (through ``shutil``): with stdout redirected (``board ui > file``) it drew 80 columns by
        25 rows on a terminal of any size. ``$COLUMNS`` and ``$LINES`` still win, as in shutil."""
        try:
            width, height = os.get_terminal_size(2 if self._file is None else self._file.fileno())
        except (ValueError, OSError):
            width, height = super()._get_terminal_size()
        return _positive(os.environ.get("COLUMNS")) or width or 80, _positive(os.environ.get("LINES")) or height or 25

    def disable_input(self) -> None:
        # textual sets its exit event and joins the thread, which its own loop notices within a
        # tenth of a second; this one is woken through the pipe first.
        if self._wake_pipe is not None and not self.exit_event.is_set():
            self._stop_reading = True
            wake(self._wake_pipe)
        super().disable_input()

    def close(self) -> None:
        super().close()
        pipe, self._wake_pipe = self._wake_pipe, None
        if pipe is not None:
            for end in pipe:
                os.close(end)

    def run_input_thread(self) -> None:
        """Wait for input and dispatch events."""
        if self._wake_pipe is None:
            self._wake_pipe = os.pipe()
            os.set_blocking(self._wake_pipe[0], False)
        wake_read = self._wake_pipe[0]
        try:
            while os.read(wake_read, 64):  # a stop asked of an earlier thread
                pass
        except BlockingIOError:
            pass
        self._stop_reading = False
        selector = selectors.SelectSelector()
        selector.register(self.fileno, selectors.EVENT_READ)
        selector.register(wake_read, selectors.EVENT_READ)

        fileno = self.fileno
        parser = XTermParser(self._debug)
        feed = parser.feed
        tick = parser.tick
        decode = getincrementaldecoder("utf-8")().decode
        read = os.read

        def process_selector_events(selector_events: list[tuple[selectors.SelectorKey, int]], final: bool = False) -> None:
            for last, (selector_key, mask) in loop_last(selector_events):
                if selector_key.fd == wake_read:
                    continue
                if mask & selectors.EVENT_READ:
                    data = read(fileno, 1024 * 4)
                    if not data:
                        # The end of the input (not a terminal, or one that went away): it stays
                        # readable, so waiting on it any longer would spin a core. Only a stop
                        # is waited for from now on.
                        if fileno in selector.get_map():
                            selector.unregister(fileno)
                        break
                    unicode_data = decode(data, final=final and last)
                    if not unicode_data:
                        continue  # the first bytes of a character, the rest to come
                    for event in feed(unicode_data):
                        self.process_message(event)
            for event in tick():
                self.process_message(event)

        try:
            while not self.exit_event.is_set() and not self._stop_reading:
                process_selector_events(selector.select(input_wait(parser)))
            if self.fileno in selector.get_map():
                selector.unregister(self.fileno)
            process_selector_events(selector.select(0), final=True)
        finally:
            selector.close()
            try:
                for _ in feed(""):
                    pass
            except (EOFError, ParseError):
                pass
