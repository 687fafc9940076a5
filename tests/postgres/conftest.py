"""The PostgreSQL tests' server: one throwaway cluster for the session (``tests/pg_cluster.py``),
a fresh database per test. Without PostgreSQL's binaries or psycopg these tests skip, saying why."""

from tests.pg_cluster import pg_cluster, pg_url  # noqa: F401 - fixtures
