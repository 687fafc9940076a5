"""The PostgreSQL tests' server: one throwaway cluster for the session (``tests/pg_cluster.py``,
its fixtures imported in ``tests/conftest.py``), a fresh database per test. Without
PostgreSQL's binaries or psycopg these tests skip, saying why."""
