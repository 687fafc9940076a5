"""The git work of a task's worktree: make it (or find it again), measure what it changed
against its base, show the diff, commit what an agent left uncommitted, and remove it.

Every call is ``git`` with an argument list (no shell), in the repository of the workspace.
Nothing here deletes work: a worktree with uncommitted changes is removed only when forced,
and a branch only once its commits are in the base.
"""

from __future__ import annotations

import fcntl
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from board.disk.atomic import read_regular
from board.disk.flock import flock_within
from board.errors import BoardError
from board.gitstate import GitUnavailable, _git
from board.worktrees.place import BRANCH_PREFIX, WORKTREES_DIR, folder_name, prefix_in_repository
from board.worktrees.record import LISTED_FILES, Changes, FileChange, WorktreeRecord, branch_name_problem

#: git calls that write (a checkout, a merge) may take longer than a status read.
WRITE_TIMEOUT = 120.0
READ_TIMEOUT = 30.0
#: ``board diff`` shows at most this much of a diff (the file list stays whole).
DIFF_LIMIT = 4 * 1024 * 1024
#: Files git ignores anyway, and board's own folders: never counted as a task's change.
_NOT_CHANGES = (".tasks/", WORKTREES_DIR + "/")
#: Who commits for board when the repository names nobody (a fresh CI machine).
_FALLBACK_IDENTITY = ("-c", "user.name=board", "-c", "user.email=board@localhost")


class WorktreeError(BoardError):
    """A worktree could not be made, merged or removed; the one line says why and what to do."""


def git(directory: Path, *args: str, timeout: float = READ_TIMEOUT, ok: tuple[int, ...] = (0,)) -> str:
    """``git -C directory args...``'s output; WorktreeError with git's own first line otherwise."""
    try:
        done = _git(directory, args, timeout)
    except GitUnavailable as error:
        raise WorktreeError(f"git {args[0]} did not run: {error}") from None
    if done.returncode not in ok:
        said = (done.stderr.strip() or done.stdout.strip() or f"exit status {done.returncode}").splitlines()[0]
        raise WorktreeError(f"git {args[0]} failed: {said}")
    return done.stdout


def git_status(directory: Path, *args: str, timeout: float = READ_TIMEOUT) -> tuple[int, str]:
    """(exit status, output) of a git command whose status is an answer (``merge-base --is-ancestor``)."""
    try:
        done = _git(directory, args, timeout)
    except GitUnavailable as error:
        raise WorktreeError(f"git {args[0]} did not run: {error}") from None
    return done.returncode, done.stdout


@dataclass(frozen=True)
class Repository:
    """The repository a workspace is in: its top folder, and the workspace's folder inside it
    (``""``, or ``sub/`` when the workspace is a folder of the repository)."""

    top: Path
    prefix: str


def repository(workspace: Path) -> Repository:
    try:
        lines = git(workspace, "rev-parse", "--show-toplevel", "--show-prefix").split("\n")
    except WorktreeError:
        raise WorktreeError(f"{workspace} is not in a git repository: worktrees need one (git init, and a first commit)") from None
    return Repository(Path(lines[0]), lines[1] if len(lines) > 1 else "")


def checked_out_branch(workspace: Path) -> str:
    """The branch checked out in the workspace: the base of the run's worktrees."""
    code, out = git_status(workspace, "symbolic-ref", "--quiet", "--short", "HEAD")
    if code != 0 or not out.strip():
        raise WorktreeError("the workspace has no branch checked out (a detached HEAD): check one out, or give --base BRANCH")
    return out.strip()


def commit_of(directory: Path, revision: str) -> str:
    if revision.startswith("-"):
        raise WorktreeError(f"'{revision[:60]}' is not a branch or commit of this repository")
    code, out = git_status(directory, "rev-parse", "--verify", "--quiet", revision + "^{commit}")
    if code != 0 or not out.strip():
        raise WorktreeError(f"'{revision}' is not a branch or commit of this repository")
    return out.strip()


def branch_exists(directory: Path, branch: str) -> bool:
    return git_status(directory, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}")[0] == 0


def is_ancestor(directory: Path, ancestor: str, descendant: str) -> bool:
    code, _ = git_status(directory, "merge-base", "--is-ancestor", ancestor, descendant)
    if code not in (0, 1):
        raise WorktreeError(f"git could not compare {ancestor[:12]} and {descendant[:12]}")
    return code == 0


def registered(workspace: Path) -> dict[Path, str | None]:
    """Every worktree git knows of this repository: its folder and its branch (None: detached)."""
    found: dict[Path, str | None] = {}
    folder: Path | None = None
    for line in git(workspace, "worktree", "list", "--porcelain").splitlines():
        if line.startswith("worktree "):
            folder = Path(line[len("worktree ") :])
            found[folder] = None
        elif line.startswith("branch refs/heads/") and folder is not None:
            found[folder] = line[len("branch refs/heads/") :]
    return found


def worktrees_folder(workspace: Path) -> Path:
    """``<workspace>/.board-worktrees``, made if missing, with the ``.gitignore`` that keeps
    it out of the project's status. A link planted in its place is refused: git would make the
    task's checkout wherever it points."""
    folder = workspace / WORKTREES_DIR
    try:
        os.mkdir(folder, 0o755)
    except FileExistsError:
        pass
    except OSError as error:
        raise WorktreeError(f"cannot make {folder}: {error.strerror}") from None
    _own_folder(folder)
    ignore = folder / ".gitignore"
    if not os.path.lexists(ignore):
        try:
            fd = os.open(ignore, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        except FileExistsError:
            return folder  # another worker made it at the same moment
        with os.fdopen(fd, "w") as handle:
            handle.write("# board's worktrees, one per task: never part of the project\n*\n")
    return folder


#: How long making a worktree waits for another's: git's own work on a big repository takes
#: seconds, a lock held longer is held by something else.
WORKTREE_LOCK_SECONDS = 120.0


@contextmanager
def making_worktrees(folder: Path) -> Iterator[None]:
    """One worktree made or removed at a time in a repository: two ``git worktree add`` at once
    (workers starting tasks together) fight over git's locks, and one of them fails."""
    _own_folder(folder)
    try:
        fd = os.open(folder / ".lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    except OSError as error:
        raise WorktreeError(f"cannot lock {folder / '.lock'}: {error.strerror} (a link or another user's file in its place?)") from None
    try:
        try:
            flock_within(fd, fcntl.LOCK_EX, WORKTREE_LOCK_SECONDS)
        except TimeoutError:
            raise WorktreeError(f"{folder / '.lock'} is locked by another process for over {WORKTREE_LOCK_SECONDS:.0f} s; try again") from None
        yield
    finally:
        os.close(fd)


def _own_folder(folder: Path) -> None:
    """Refuse a ``.board-worktrees`` that is a link, a file or another user's: git would work
    wherever it points."""
    try:
        info = os.lstat(folder)
    except FileNotFoundError:
        raise WorktreeError(f"{folder} is gone") from None
    if not stat.S_ISDIR(info.st_mode):
        raise WorktreeError(f"{folder} is not a folder (a link or a file is in its place): remove it, board keeps worktrees there")
    if info.st_uid != os.getuid():
        raise WorktreeError(f"{folder} belongs to another user: remove it, board keeps worktrees there")


def task_folder(workspace: Path, record: WorktreeRecord) -> Path:
    """Where a task's command runs: the workspace's own folder inside the task's worktree."""
    prefix = repository(workspace).prefix
    return workspace / record.path / prefix if prefix else workspace / record.path


def make(workspace: Path, task_id: str, subject: str, base: str, *, record: WorktreeRecord | None = None) -> WorktreeRecord:
    """The task's worktree, made on its branch from ``base``, or found again: a worker killed
    mid-task leaves it (and its commits) for the next attempt. A record kept on the task names
    the branch and folder it had, whatever the task is called now."""
    repo = repository(workspace)
    problem = branch_name_problem(base)
    if problem is not None:
        raise WorktreeError(problem)
    folder = worktrees_folder(workspace)
    with making_worktrees(folder):
        return _make(workspace, repo, folder, task_id, subject, base, record)


def _make(workspace: Path, repo: Repository, folder: Path, task_id: str, subject: str, base: str, record: WorktreeRecord | None) -> WorktreeRecord:
    if record is not None:
        branch, path, base = record.branch, record.path, record.base
    else:
        if not branch_exists(workspace, base):
            raise WorktreeError(f"'{base}' is not a branch of this repository: worktrees start from a local branch and merge into it")
        branch, path = _fresh_names(workspace, folder, task_id, subject)
    checkout = workspace / path
    if checkout.parent != folder or os.path.islink(checkout):
        raise WorktreeError(f"#{task_id}'s worktree {path} is not a folder of {WORKTREES_DIR}/: board will not use it")
    if record is not None and exists(workspace, record):
        return record  # left by the task's last attempt: it carries on there
    if os.path.lexists(checkout):
        raise WorktreeError(f"{path} is in the way of #{task_id}'s worktree and is not one: move it away")
    git(workspace, "worktree", "prune")  # a worktree whose folder was deleted by hand
    made_from = record.made_from if record and record.made_from else commit_of(workspace, f"refs/heads/{base}")
    if record is not None and branch_exists(workspace, branch):
        git(workspace, "worktree", "add", "--quiet", str(checkout), branch, timeout=WRITE_TIMEOUT)
    else:
        git(workspace, "worktree", "add", "--quiet", "-b", branch, str(checkout), made_from, timeout=WRITE_TIMEOUT)
    _bring_local_settings(workspace, checkout / repo.prefix if repo.prefix else checkout)
    return record or WorktreeRecord(branch=branch, base=base, path=path, made_from=made_from)


def _fresh_names(workspace: Path, folder: Path, task_id: str, subject: str) -> tuple[str, str]:
    """A branch and folder for a task that has none yet, never one that exists: a branch or
    folder left by a task deleted before (or made by hand) is someone's work, not this task's."""
    name = folder_name(task_id, subject)
    for attempt in range(1, 100):
        candidate = name if attempt == 1 else f"{name}-{attempt}"
        if not os.path.lexists(folder / candidate) and not branch_exists(workspace, BRANCH_PREFIX + candidate):
            return BRANCH_PREFIX + candidate, f"{WORKTREES_DIR}/{candidate}"
    raise WorktreeError(f"no free branch name for #{task_id} under {BRANCH_PREFIX}{name}")


def _bring_local_settings(workspace: Path, copy: Path) -> None:
    """Claude Code started in the worktree reads the project's settings from the worktree:
    committed ones are there already; ones not committed (``board hooks install`` writes
    ``.claude/settings.json`` or ``settings.local.json``) are copied in, so the hooks count and
    guard the task's calls there too."""
    for name in ("settings.json", "settings.local.json"):
        source = workspace / ".claude" / name
        target = copy / ".claude" / name
        try:
            if os.path.lexists(target):
                continue
            # Read only as a regular file, never through a link or from a FIFO: checked and
            # read in one open, with no moment between for one to be put in its place.
            data = read_regular(source)
            if os.path.islink(target.parent):
                continue
            target.parent.mkdir(exist_ok=True)
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
        except OSError:
            continue


def exists(workspace: Path, record: WorktreeRecord) -> bool:
    """Whether the task's worktree is there: a real folder of ``.board-worktrees/`` that git
    lists as a worktree of this repository on the record's branch. A folder whose ``.git``
    names another repository (planted, or rewritten by an agent) is not: board runs no git in it."""
    folder = workspace / WORKTREES_DIR
    checkout = folder / record.path.partition("/")[2]
    try:
        if not stat.S_ISDIR(os.lstat(folder).st_mode) or not stat.S_ISDIR(os.lstat(checkout).st_mode):
            return False
    except OSError:
        return False
    listed = {os.path.realpath(path): branch for path, branch in registered(workspace).items()}
    return listed.get(os.path.realpath(checkout)) == record.branch


def _fork_point(checkout: Path, record: WorktreeRecord) -> str:
    """Where the task's own work begins: the commit its worktree was made at (which holds the
    work of blockers not yet merged), unless the base has since caught up past it (the base
    merged in to settle a conflict): then the newest commit the branch shares with the base."""
    code, out = git_status(checkout, "merge-base", f"refs/heads/{record.base}", "HEAD")
    shared = out.strip() if code == 0 else ""
    if record.made_from and (not shared or is_ancestor(checkout, shared, record.made_from)) and is_ancestor(checkout, record.made_from, "HEAD"):
        return record.made_from
    if shared:
        return shared
    raise WorktreeError(f"the base {record.base} of {record.branch} is gone, and board did not note where the branch began")


def bring_in(workspace: Path, record: WorktreeRecord, branches: list[str]) -> tuple[WorktreeRecord, list[str]]:
    """Merge ``branches`` (the unmerged work of the tasks this one waits for) into a new
    worktree, so the task starts from what it depends on; a branch that conflicts is left out.
    The record, now made from the result, and what was left out."""
    checkout = workspace / record.path
    left_out = []
    for branch in branches:
        code, _ = git_status(checkout, *identity(checkout), "merge", "--quiet", "--no-edit", "--no-verify", branch, timeout=WRITE_TIMEOUT)
        if code != 0:
            git_status(checkout, "merge", "--abort")
            left_out.append(branch)
    return replace(record, made_from=commit_of(checkout, "HEAD")), left_out


def _workspace_paths(paths: list[str], prefix: str) -> list[str]:
    inside = [p[len(prefix) :] for p in paths if p.startswith(prefix)] if prefix else paths
    return [p for p in inside if p and not p.startswith(_NOT_CHANGES)]


#: Claude Code's settings files board copies into a worktree when the workspace has them
#: uncommitted (``_bring_local_settings``): never the task's work.
COPIED_SETTINGS = (".claude/settings.json", ".claude/settings.local.json")


def _copied_here(checkout: Path, untracked: list[str]) -> set[str]:
    """The settings files board copied into this checkout, as repository paths (untracked)."""
    prefix = _prefix_of(checkout)
    return {prefix + name for name in COPIED_SETTINGS} & set(untracked)


def _prefix_of(checkout: Path) -> str:
    """The workspace's folder inside the repository, for a checkout of it (``""`` or ``sub/``),
    found as the hook finds it, without running git."""
    return prefix_in_repository(os.path.realpath(checkout.parent.parent)) or ""  # <workspace>/.board-worktrees/<name>


def _all_untracked(checkout: Path) -> list[str]:
    return [p for p in git(checkout, "ls-files", "--others", "--exclude-standard", "-z").split("\0") if p]


def _untracked(checkout: Path) -> list[str]:
    """New files in the checkout, those board copied in left out."""
    found = _all_untracked(checkout)
    copied = _copied_here(checkout, found)
    return [p for p in found if p not in copied]


def _lines_of(path: Path) -> int | None:
    """Lines of a new file, or None for a binary one (as git's numstat says ``-``)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return 0
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            return 0
        data = handle.read(DIFF_LIMIT)
    if b"\0" in data[:8192]:
        return None
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def measure(workspace: Path, record: WorktreeRecord) -> Changes:
    """What the task changed against its base: committed, uncommitted and new files in its
    worktree; once the worktree is gone, what its branch holds that the base does not."""
    prefix = repository(workspace).prefix
    checkout = workspace / record.path
    if exists(workspace, record):
        numstat = git(checkout, "diff", "--numstat", "-z", "--no-renames", _fork_point(checkout, record))
        untracked = _untracked(checkout)
    else:
        _branch_there(workspace, record)
        numstat = git(workspace, "diff", "--numstat", "-z", "--no-renames", f"refs/heads/{record.base}...refs/heads/{record.branch}")
        untracked = []
    counted: dict[str, FileChange] = {}
    for entry in numstat.split("\0"):
        parts = entry.split("\t", 2)
        if len(parts) != 3:
            continue
        added, removed, path = parts
        binary = added == "-"
        counted[path] = FileChange(path, 0 if binary else int(added), 0 if binary else int(removed), binary)
    for path in untracked:
        lines = _lines_of(checkout / path)
        counted[path] = FileChange(path, lines or 0, 0, lines is None)
    changes = sorted((replace(c, path=c.path[len(prefix) :]) for c in counted.values() if _workspace_paths([c.path], prefix)), key=lambda c: c.path)
    return Changes(
        files=len(changes),
        added=sum(c.added for c in changes),
        removed=sum(c.removed for c in changes),
        listed=tuple(changes[:LISTED_FILES]),
    )


def diff_text(workspace: Path, record: WorktreeRecord) -> str:
    """The task's whole diff against its base (new files included), as ``git diff`` prints it."""
    checkout = workspace / record.path
    if not exists(workspace, record):
        _branch_there(workspace, record)
        return git(workspace, "diff", "--no-color", "--no-renames", f"refs/heads/{record.base}...refs/heads/{record.branch}")[:DIFF_LIMIT]
    text = git(checkout, "diff", "--no-color", "--no-renames", _fork_point(checkout, record))
    for path in _untracked(checkout):
        if len(text) >= DIFF_LIMIT:
            break
        if path.startswith(_NOT_CHANGES):
            continue
        text += git(checkout, "diff", "--no-color", "--no-index", "--", "/dev/null", path, ok=(0, 1))
    return text[:DIFF_LIMIT]


def _branch_there(workspace: Path, record: WorktreeRecord) -> None:
    for branch, what in ((record.branch, "the task's branch"), (record.base, "its base")):
        if not branch_exists(workspace, branch):
            raise WorktreeError(f"{what} {branch} is gone, and with it its worktree: there is nothing left to compare")


def task_diff(workspace: Path, record: WorktreeRecord) -> str:
    """What ``board diff`` shows: the work not yet merged, or once merged what its merge brought
    into the base."""
    if record.merged:
        return git(workspace, "show", "--no-color", "--format=", "-m", "--first-parent", record.merged)[:DIFF_LIMIT]
    return diff_text(workspace, record)


def identity(directory: Path) -> tuple[str, ...]:
    """``-c user.name=board ...`` when the repository names no one to commit as, else nothing."""
    code, out = git_status(directory, "config", "user.email")
    return () if code == 0 and out.strip() else _FALLBACK_IDENTITY


def dirty(checkout: Path, *, worktree: bool = False) -> list[str]:
    """Files with uncommitted changes (untracked ones included) in a checkout; in a task's
    ``worktree``, the settings board copied in do not count."""
    out = git(checkout, "status", "--porcelain=v1", "-z", "--untracked-files=all")
    paths, untracked, entries = [], [], out.split("\0")
    index = 0
    while index < len(entries):
        entry = entries[index]
        index += 1
        if len(entry) < 4:
            continue
        paths.append(entry[3:])
        if entry.startswith("??"):
            untracked.append(entry[3:])
        if entry[0] in "RC":
            index += 1  # the original name of a rename follows
    if worktree and untracked:
        copied = _copied_here(checkout, untracked)
        paths = [p for p in paths if p not in copied]
    return paths


def leftover_markers(workspace: Path, record: WorktreeRecord) -> list[str]:
    """Files in which the task's branch leaves conflict markers (``<<<<<<<`` and the like)
    that its base does not have, as ``git diff --check`` finds them."""
    _branch_there(workspace, record)
    code, out = git_status(workspace, "diff", "--check", "--no-color", f"refs/heads/{record.base}...refs/heads/{record.branch}")
    if code == 0:
        return []
    found = []
    for line in out.splitlines():
        if "leftover conflict marker" in line:
            path = line.split(":", 1)[0]
            if path not in found:
                found.append(path)
    return found


def unfinished_merge(checkout: Path) -> str | None:
    """What is half done in a checkout (a merge with conflicts, a rebase, a cherry-pick), in
    words; None when nothing is. Committing it all as it stands would commit conflict markers."""
    conflicted = sorted({p for p in (line.split("\t", 1)[-1] for line in git(checkout, "ls-files", "-u", "-z").split("\0")) if p})
    if conflicted:
        return f"is in the middle of a merge with conflicts in {', '.join(conflicted[:3])}{'…' if len(conflicted) > 3 else ''}"
    for head, what in (("MERGE_HEAD", "a merge"), ("REBASE_HEAD", "a rebase"), ("CHERRY_PICK_HEAD", "a cherry-pick"), ("REVERT_HEAD", "a revert")):
        if git_status(checkout, "rev-parse", "-q", "--verify", head)[0] == 0:
            return f"is in the middle of {what}"
    return None


def commit_leftovers(workspace: Path, record: WorktreeRecord, message: str) -> bool:
    """Commit what the agent left uncommitted in the task's worktree (its branch is what gets
    merged); True when there was something."""
    checkout = workspace / record.path
    if not exists(workspace, record):
        return False
    unsettled = unfinished_merge(checkout)
    if unsettled is not None:
        raise WorktreeError(f"{record.path} {unsettled}: finish it there (git add, git commit) or give it up (git merge --abort); nothing was committed")
    if not dirty(checkout, worktree=True):
        return False
    left_out = [f":(exclude,literal){path}" for path in sorted(_copied_here(checkout, _all_untracked(checkout)))]
    git(checkout, "add", "--all", "--", ":/", *left_out, timeout=WRITE_TIMEOUT)
    git(checkout, *identity(checkout), "commit", "--quiet", "--no-verify", "-m", message, timeout=WRITE_TIMEOUT)
    return True


def remove(workspace: Path, record: WorktreeRecord, *, force: bool = False) -> list[str]:
    """Remove the task's worktree, and its branch when the base holds every commit of it.
    Refused for a worktree with uncommitted changes unless ``force``. What was done, in words."""
    done: list[str] = []
    checkout = workspace / record.path
    if exists(workspace, record):
        with making_worktrees(workspace / WORKTREES_DIR):  # looked at and removed in one hold
            changed = dirty(checkout, worktree=True)
            if changed and not force:
                raise WorktreeError(f"{record.path} has uncommitted changes ({', '.join(changed[:3])}{'…' if len(changed) > 3 else ''}): commit them there, or remove it with --force")
            if not force:
                _drop_copied_settings(checkout)
            git(workspace, "worktree", "remove", *(("--force",) if force else ()), str(checkout), timeout=WRITE_TIMEOUT)
        done.append(f"removed {record.path}")
    if branch_exists(workspace, record.branch):
        if branch_exists(workspace, record.base) and is_ancestor(workspace, record.branch, record.base):
            git(workspace, "branch", "--quiet", "-D", record.branch)
            done.append(f"deleted {record.branch} (its commits are in {record.base})")
        else:
            done.append(f"kept {record.branch}: it holds commits {record.base} does not")
    return done


def _drop_copied_settings(checkout: Path) -> None:
    """The settings board copied in, untracked there: gone, so git removes the worktree as clean."""
    for path in _copied_here(checkout, _all_untracked(checkout)):
        try:
            os.unlink(checkout / path)
        except OSError:
            pass
