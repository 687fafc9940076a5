"""``board web``: the dashboard served to web browsers (``board.web.server``).

Each browser session is a dashboard process of its own (``board ui``, with textual's web driver),
which reaches the board through the store like any other; this package only carries keys and
frames between the browser and that process, and keeps out whoever lacks the token.
"""
