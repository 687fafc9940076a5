"""Files on disk, reached safely: every folder below a board's root opened without following a
link (``confine``), and writes that are whole or absent (``atomic``: temp files, renames,
spares, fsyncs). Below everything that touches a board's files: the store, the hooks, the logs."""
