"""The coordination runtime: the coordinator's tick and daemon, workers, policies and the run supervisor.

Nothing here imports Textual; the dashboard is started lazily by ``board demo`` only.
"""
