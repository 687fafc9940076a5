"""The terminal dashboard (Textual). Everything it shows comes through ``board.store``."""

from __future__ import annotations

from pathlib import Path

from board.errors import BoardError


def run_dashboard(workspace: Path, *, readonly: bool = False, remember_choices: bool = True) -> int:
    """Open the live dashboard on ``workspace`` (a ``.tasks/`` board or a Claude Code list) until
    quit; its exit status (1 when it stopped on an error). ``remember_choices=False`` (the demo)
    leaves the user's config alone."""
    from board.store import detect_layout
    from board.store.base import database_url

    workspace = Path(workspace).expanduser().resolve()
    if database_url(workspace) is None and not detect_layout(workspace).exists():
        raise BoardError(f"no board in {workspace}: run 'board init' there or pass a directory that has .tasks/")
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
