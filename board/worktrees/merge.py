"""Merging a task's branch into its base, computed before anything is touched.

The result is worked out in git's object store alone (``git merge-tree --write-tree``): a
fast-forward when the base has not moved since the branch began, otherwise a merge commit
whose parents are the base and the branch. Only then is the base moved to it: with
``git update-ref`` (compare-and-set) when no checkout has the base, or as a fast-forward of the
checkout that has it, refused first if that checkout has uncommitted changes in a file the
merge changes. A conflict changes nothing at all; it names the files.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from board.worktrees.git_work import WRITE_TIMEOUT, WorktreeError, commit_of, dirty, git, git_status, identity, is_ancestor, registered, repository
from board.worktrees.record import WorktreeRecord


class MergeConflict(WorktreeError):
    """The branch and its base changed the same lines: nothing was changed."""

    def __init__(self, message: str, files: tuple[str, ...]) -> None:
        super().__init__(message)
        self.files = files


@dataclass(frozen=True)
class Merged:
    #: The base's new commit.
    commit: str
    #: ``fast-forward``, ``merge commit`` or ``already merged``.
    how: str
    #: Files the merge changed in the base, relative to the workspace.
    files: tuple[str, ...]


def merge(workspace: Path, record: WorktreeRecord, message: str) -> Merged:
    """Merge ``record.branch`` into ``record.base``; MergeConflict (nothing changed) when the
    two changed the same lines, WorktreeError when the base's checkout would lose work."""
    base_ref = f"refs/heads/{record.base}"
    prefix = repository(workspace).prefix
    base = commit_of(workspace, base_ref)
    branch = commit_of(workspace, f"refs/heads/{record.branch}")
    if is_ancestor(workspace, branch, base):
        return Merged(base, "already merged", ())
    if is_ancestor(workspace, base, branch):
        result, how = branch, "fast-forward"
    else:
        code, out = git_status(workspace, "merge-tree", "--write-tree", "--name-only", "--no-messages", "-z", base, branch, timeout=WRITE_TIMEOUT)
        parts = [p for p in out.split("\0") if p]
        if code == 1:
            files = tuple(sorted({p[len(prefix) :] if prefix and p.startswith(prefix) else p for p in parts[1:]}))
            raise MergeConflict(f"{record.branch} conflicts with {record.base} in {', '.join(files) or 'its history'}: nothing was merged", files)
        if code != 0 or not parts:
            raise WorktreeError(f"git merge-tree could not merge {record.branch} into {record.base}")
        tree = parts[0]
        result = git(workspace, *identity(workspace), "commit-tree", tree, "-p", base, "-p", branch, "-m", message, timeout=WRITE_TIMEOUT).strip()
        how = "merge commit"
    changed = tuple(p for p in git(workspace, "diff", "--name-only", "-z", "--no-renames", base, result).split("\0") if p)
    _move_base(workspace, record.base, base, result, changed)
    return Merged(result, how, tuple(p[len(prefix) :] if prefix and p.startswith(prefix) else p for p in changed))


def _move_base(workspace: Path, base_name: str, old: str, new: str, changed: tuple[str, ...]) -> None:
    """Point the base branch at ``new``: its checkout (if any) fast-forwards, keeping the
    uncommitted changes it has in files the merge leaves alone."""
    checkout = next((folder for folder, branch in registered(workspace).items() if branch == base_name), None)
    if checkout is None:
        git(workspace, "update-ref", "-m", f"board: merge into {base_name}", f"refs/heads/{base_name}", new, old)
        return
    touched = set(changed) & set(dirty(checkout))
    if touched:
        names = sorted(touched)
        raise WorktreeError(
            f"{base_name} is checked out in {checkout} with uncommitted changes to {', '.join(names[:3])}{'…' if len(names) > 3 else ''}, "
            "which the merge changes: commit or stash them, then merge again"
        )
    if commit_of(checkout, "HEAD") != old:
        raise WorktreeError(f"{base_name} moved while the merge was worked out: merge again")
    git(checkout, "merge", "--ff-only", "--quiet", "--no-edit", new, timeout=WRITE_TIMEOUT)
