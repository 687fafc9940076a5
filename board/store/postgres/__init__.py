"""A board kept in PostgreSQL (``board --db URL``): connecting (``connect``) and the versioned
schema (``migrations``).

psycopg is an optional extra (``pip install 'board[postgres]'``), so nothing here imports it when
this package is imported: each module imports it where it connects, and says how to install it
when it is missing.
"""
