"""The terminal dashboard (Textual). Everything it shows comes through ``board.store``."""

from __future__ import annotations

import os
from pathlib import Path

from board.errors import BoardError


def no_terminal() -> str | None:
    """Why the dashboard cannot run here, or None. Textual's terminal driver reads keys from
    stdin and draws on stderr (stdout stays free: ``board ui > file`` draws as usual). Without
    a terminal on both (from a script, ``nohup``, ``< /dev/null``, ``2> file``) it drew escape
    codes into a file and its input thread spun on the end of stdin, a whole core for as long
    as it ran. A driver named in ``$TEXTUAL_DRIVER`` (the browser's, through ``board web``)
    needs no terminal."""
    if os.environ.get("TEXTUAL_DRIVER") or (os.isatty(0) and os.isatty(2)):
        return None
    return "the dashboard needs a terminal to read keys from and draw on, and stdin or stderr here is not one"


def run_dashboard(workspace: Path, *, readonly: bool = False, remember_choices: bool = True) -> int:
    """Open the live dashboard on ``workspace`` (a ``.tasks/`` board or a Claude Code list) until
    quit; its exit status (1 when it stopped on an error). ``remember_choices=False`` (the demo)
    leaves the user's config alone."""
    from board.store import detect_layout
    from board.store.base import database_url

    workspace = Path(workspace).expanduser().resolve()
    if database_url(workspace) is None and not detect_layout(workspace).exists():
        raise BoardError(f"no board in {workspace}: run 'board init' there or pass a directory that has .tasks/")
    problem = no_terminal()
    if problem is not None:
        raise BoardError(f"{problem}: run it in a terminal, or serve it to a browser with 'board web'; 'board task list' prints the board")
    import gc

    collecting = gc.isenabled()
    # Until the board is on screen the cyclic collector pauses (``BoardApp._settle_memory``
    # resumes it): what Textual's and board's imports and the first frame make stays alive, and
    # its passes over them were a tenth of the time to that frame (about 30 ms, 135 passes).
    # ``board ui`` paused it already, as it started (``board.cli.DASHBOARD_COMMANDS``).
    gc.disable()
    try:
        from board.ui.app import BoardApp

        app = BoardApp(workspace, readonly=readonly, remember_choices=remember_choices)
        app.run()
    finally:
        if collecting:
            gc.enable()  # should the dashboard have ended before it settled
    # Textual prints the error and sets the return code; a dashboard that died must not exit 0.
    return app.return_code or 0
