"""Claude Code: its hooks (``hooks/``), its session transcripts (calls no hook saw, tokens and
their price) and its agent teams (members, inboxes). A board kept as a Claude Code task list is
the store's business (``board.store.claude``)."""
