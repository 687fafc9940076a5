"""A git worktree per task: where they live and how a path in one maps back to the workspace
(place.py, standard library only, for the hook), what a task's record of its worktree says
(record.py), the git work itself (git_work.py: make, measure, diff, remove) and merging a
finished task's branch into its base (merge.py). The board side, which writes the record on
the task, is on_board.py."""
