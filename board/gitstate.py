"""Reading a workspace's git state with the git command line: argument lists, timeouts, no shell."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from board import json_bounds
from board.disk.atomic import read_regular, write_json_atomic

DEFAULT_TIMEOUT = 5.0


class GitUnavailable(Exception):
    """Not a git repository, git missing, or git too slow; callers treat it as 'no git state'."""


def _git(workspace: Path, args: tuple[str, ...], timeout: float) -> subprocess.CompletedProcess[str]:
    """``git -C workspace args...``, whatever its exit status; GitUnavailable when it cannot run."""
    try:
        return subprocess.run(["git", "-C", str(workspace), *args], capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL, env=_git_env())
    except (OSError, subprocess.TimeoutExpired) as error:
        raise GitUnavailable(str(error)) from None


def run_git(workspace: Path, *args: str, timeout: float = DEFAULT_TIMEOUT) -> str:
    done = _git(workspace, args, timeout)
    if done.returncode != 0:
        raise GitUnavailable(done.stderr.strip() or f"git {args[0]} exited {done.returncode}")
    return done.stdout


def head(workspace: Path) -> str | None:
    """The commit HEAD points at, or None outside a repository (or before the first commit)."""
    try:
        return run_git(workspace, "rev-parse", "--verify", "--quiet", "HEAD").strip() or None
    except GitUnavailable:
        return None


def _git_env() -> dict[str, str]:
    env = dict(os.environ)
    env["GIT_TERMINAL_PROMPT"] = "0"  # never wait for a password
    env["LC_ALL"] = "C"
    return env


# -- drift: the state the alert detectors read --------------------------------------------------

#: Where the upstream head last seen is remembered, so a force push is caught across runs.
STATE_FILE = "git-state.json"
#: board's own directory is never reported as dirty or untracked.
_BOARD_DIR = ".tasks/"


@dataclass(frozen=True)
class ForcePush:
    """The upstream was rewritten: ``old`` (seen before) is not an ancestor of ``new``."""

    old: str
    new: str
    detected_at: str


@dataclass(frozen=True)
class GitState:
    """One snapshot of a workspace's git state; every path is relative to the workspace."""

    head: str | None
    branch: str | None
    upstream: str | None = None
    upstream_head: str | None = None
    #: The upstream head recorded by the previous gathering (None on the first).
    previous_upstream_head: str | None = None
    ahead: int = 0
    behind: int = 0
    dirty: tuple[str, ...] = ()
    untracked: tuple[str, ...] = ()
    #: Files the upstream changed since the merge base with HEAD (``HEAD...@{u}``).
    upstream_changed: tuple[str, ...] = ()
    #: A force push seen and not yet reconciled (HEAD does not contain the new upstream head).
    force_push: ForcePush | None = None
    fetched: bool = False
    fetch_error: str | None = None

    @property
    def changed_locally(self) -> frozenset[str]:
        return frozenset(self.dirty) | frozenset(self.untracked)


def gather_git_state(
    workspace: Path,
    local_dir: Path | None = None,
    *,
    fetch: bool = False,
    timeout: float = DEFAULT_TIMEOUT,
    now: str | None = None,
) -> GitState | None:
    """Read HEAD, upstream, ahead/behind, dirty files and upstream changes with a few git calls.

    Returns None when the workspace is not inside a git repository (it then has no drift
    alerts). Raises ``GitUnavailable`` when git fails or times out, so a caller can keep
    what it knew instead of clearing every drift alert on one slow call. With ``local_dir`` (the
    store's: this clone's git state is this machine's), the upstream head is remembered in
    ``git-state.json`` there to catch force pushes across runs.
    Never fetches unless ``fetch`` is true.
    """
    fetched, fetch_error = False, None
    if fetch:
        try:
            run_git(workspace, "fetch", "--quiet", "--no-tags", "--no-recurse-submodules", timeout=timeout)
            fetched = True
        except GitUnavailable as error:
            fetch_error = str(error).splitlines()[0] if str(error) else "git fetch failed"
    try:
        raw_status = run_git(workspace, "status", "--porcelain=v2", "--branch", "-z", "--untracked-files=all", timeout=timeout)
    except GitUnavailable as error:
        if _not_a_repository(str(error)):
            return None
        raise
    prefix, upstream_head = _prefix_and_upstream_head(workspace, "\0# branch.upstream " in "\0" + raw_status, timeout)
    status = parse_status_v2(raw_status, prefix)
    upstream_changed: tuple[str, ...] = ()
    if status.upstream is not None and status.behind and status.head is not None:
        listing = run_git(workspace, "diff", "--name-only", "-z", "--relative", "HEAD...@{upstream}", timeout=timeout)
        upstream_changed = tuple(sorted(p for p in listing.split("\0") if p))
    remembered = _read_remembered(local_dir) if local_dir is not None else {}
    previous = remembered.get("upstreamHead") if remembered.get("upstream") == status.upstream else None
    force_push = _force_push_from(remembered.get("forcePush")) if remembered.get("upstream") == status.upstream else None
    if previous and upstream_head and previous != upstream_head and not _is_ancestor(workspace, previous, upstream_head, timeout):
        force_push = ForcePush(old=previous, new=upstream_head, detected_at=now or "")
    if force_push is not None and (upstream_head is None or _is_ancestor(workspace, upstream_head, "HEAD", timeout)):
        force_push = None  # HEAD now contains the rewritten upstream: reconciled
    state = GitState(
        head=status.head,
        branch=status.branch,
        upstream=status.upstream,
        upstream_head=upstream_head,
        previous_upstream_head=previous,
        ahead=status.ahead,
        behind=status.behind,
        dirty=status.dirty,
        untracked=status.untracked,
        upstream_changed=upstream_changed,
        force_push=force_push,
        fetched=fetched,
        fetch_error=fetch_error,
    )
    if local_dir is not None:
        _remember(local_dir, state, remembered, fetched_at=now if fetched else remembered.get("fetchedAt"))
    return state


def last_fetched_at(local_dir: Path) -> str | None:
    """When board last fetched for this workspace (ISO time), so a fetch setting is rate-limited."""
    value = _read_remembered(local_dir).get("fetchedAt")
    return value if isinstance(value, str) else None


@dataclass(frozen=True)
class _Status:
    head: str | None
    branch: str | None
    upstream: str | None
    ahead: int
    behind: int
    dirty: tuple[str, ...]
    untracked: tuple[str, ...]


def parse_status_v2(output: str, prefix: str = "") -> _Status:
    """Parse ``git status --porcelain=v2 --branch -z``; paths become relative to ``prefix``."""
    head = branch = upstream = None
    ahead = behind = 0
    dirty: set[str] = set()
    untracked: set[str] = set()
    fields = output.split("\0")
    index = 0
    while index < len(fields):
        entry = fields[index]
        index += 1
        if not entry:
            continue
        if entry.startswith("# "):
            name, _, value = entry[2:].partition(" ")
            if name == "branch.oid":
                head = None if value == "(initial)" else value
            elif name == "branch.head":
                branch = None if value == "(detached)" else value
            elif name == "branch.upstream":
                upstream = value
            elif name == "branch.ab":
                plus, _, minus = value.partition(" ")
                ahead, behind = int(plus.lstrip("+")), int(minus.lstrip("-"))
            continue
        kind = entry[0]
        if kind == "1":
            dirty.add(entry.split(" ", 8)[8])
        elif kind == "2":
            dirty.add(entry.split(" ", 9)[9])
            if index < len(fields):
                dirty.add(fields[index])  # the original path of a rename or copy
                index += 1
        elif kind == "u":
            dirty.add(entry.split(" ", 10)[10])
        elif kind == "?":
            untracked.add(entry[2:])
    return _Status(
        head=head,
        branch=branch,
        upstream=upstream,
        ahead=ahead,
        behind=behind,
        dirty=_relative(dirty, prefix),
        untracked=_relative(untracked, prefix),
    )


def _relative(paths: set[str], prefix: str) -> tuple[str, ...]:
    """Repository paths under the workspace, relative to it; board's own files left out."""
    inside = (p[len(prefix):] for p in paths if p.startswith(prefix))
    return tuple(sorted(p for p in inside if p and not p.startswith(_BOARD_DIR)))


def _prefix_and_upstream_head(workspace: Path, has_upstream: bool, timeout: float) -> tuple[str, str | None]:
    """The workspace's path inside the repository and the upstream's commit, in one git call."""
    if has_upstream:
        try:
            lines = run_git(workspace, "rev-parse", "--show-prefix", "--verify", "--quiet", "@{upstream}^{commit}", timeout=timeout).split("\n")
            return lines[0], (lines[1].strip() or None) if len(lines) > 1 else None
        except GitUnavailable:
            pass  # the upstream ref is gone (remote branch deleted): no upstream head
    return run_git(workspace, "rev-parse", "--show-prefix", timeout=timeout).strip(), None


def _is_ancestor(workspace: Path, ancestor: str, descendant: str, timeout: float) -> bool:
    """True when ``ancestor`` is reachable from ``descendant``; an unknown commit counts as yes,
    so a commit pruned away never raises a force-push alert on its own."""
    done = _git(workspace, ("merge-base", "--is-ancestor", ancestor, descendant), timeout)
    if done.returncode in (0, 1):
        return done.returncode == 0
    return True


def _not_a_repository(message: str) -> bool:
    return "not a git repository" in message.lower() or "no such file or directory" in message.lower()


def _read_remembered(local_dir: Path) -> dict[str, Any]:
    try:
        data = json_bounds.loads(read_regular(local_dir / STATE_FILE))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _force_push_from(value: Any) -> ForcePush | None:
    if not isinstance(value, dict):
        return None
    try:
        return ForcePush(old=str(value["old"]), new=str(value["new"]), detected_at=str(value.get("detectedAt", "")))
    except KeyError:
        return None


def _remember(local_dir: Path, state: GitState, before: dict[str, Any], *, fetched_at: str | None) -> None:
    """Persist the upstream head, any unreconciled force push and the last fetch, when they changed."""
    record: dict[str, Any] = {"upstream": state.upstream, "upstreamHead": state.upstream_head, "forcePush": None, "fetchedAt": fetched_at}
    if state.force_push is not None:
        record["forcePush"] = {"old": state.force_push.old, "new": state.force_push.new, "detectedAt": state.force_push.detected_at}
    if state.upstream_head is None and before.get("upstream") == state.upstream:
        record["upstreamHead"] = before.get("upstreamHead")  # keep what we knew while the ref is missing
    if record != {k: before.get(k) for k in record}:
        try:
            write_json_atomic(local_dir / STATE_FILE, record)
        except OSError:
            pass  # a read-only board still gets its alerts; it only forgets the head seen
