"""Plans in and out: a markdown plan, or another tool's board (Backlog.md, beads, Task Master),
made into board tasks, matched again on each import by a stable key; and board's tasks written
back out as a Backlog.md folder.

Each reader turns its source into a ``Plan`` (``plan.py``) and knows nothing of the store;
``importing.py`` alone compares a plan with the board and writes it, through the store's own
create and update and ``board.actions``' moves.
"""
