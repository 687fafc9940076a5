"""Nothing board writes below a board's own folder ever lands outside it, whatever is planted.

A co-tenant who can write in ``.tasks/`` can replace ``archive/``, ``toolcalls/``, ``agents/``
or any other folder there by a symbolic link to a folder elsewhere. Opening
``.tasks/toolcalls/7.jsonl`` by its path would follow that link: ``O_NOFOLLOW`` guards the last
part of a path only. So every folder below a board's root is walked one step at a time from a
descriptor of the one above, each opened with ``O_NOFOLLOW | O_DIRECTORY``, and the file is
then made, opened, renamed or removed relative to the last of them (``openat``, ``renameat``,
``unlinkat``, ``mkdirat``). A link in place of a folder is refused, as a link in place of a file
is (``SpecialFile``); there is no moment between a check and a use for a link to slip in.

A board's root is registered once (``confine``) by whatever finds the board: its layout, the
hook, a team. The root itself may be a link (a workspace kept elsewhere): only what is below it
is the board's own tree. Paths outside every registered root are used as they are.

Standard library only: ``board hook`` writes through it.
"""

from __future__ import annotations

import errno
import os
import stat

#: Every registered root, as ``os.path.abspath`` gives it.
_ROOTS: set[str] = set()
#: A parent folder's (root, folders below the root) once worked out: every file of one folder
#: shares it, so a board with thousands of files asks once per folder, not once per file.
_PARENTS: dict[str, tuple[str, tuple[str, ...]] | None] = {}
_PARENTS_KEPT = 512

_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_FOLDER_BELOW = _DIRECTORY | os.O_NOFOLLOW
#: What ``opener`` adds to the flags it is given: no link, no wait on a FIFO, not inherited.
_OPENER_FLAGS = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class SpecialFile(OSError):
    """An entry board will not read or write: not a regular file (a FIFO, a directory, a
    device, a symbolic link), unreadable, or larger than board reads. ``reason`` says which."""

    def __init__(self, path: os.PathLike[str] | str, reason: str, code: int = errno.EINVAL) -> None:
        super().__init__(code, reason, str(path))
        self.path = str(path)
        self.reason = reason

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


class LinkedFolder(SpecialFile):
    """A folder below a board's root that is not a plain folder (a symbolic link, a file): what
    board would have read or written there, it refuses."""


#: The folders board keeps below a board's state folder (``.tasks/``, or ``.board/`` of a
#: Claude Code list). Each is checked on every scan, so that one planted as a link is reported.
BOARD_FOLDERS = ("agents", "archive", "checkpoints", "logs", "reservations", "tokens", "toolcalls", "transcripts")
#: Why board will not use a folder of its own (refusals, ``board check``, the alert's advice).
LINKED_FOLDER = "a symbolic link in place of a folder (board never writes or reads through links in its folders)"
NOT_A_FOLDER = "not a folder (board keeps its own files there)"


def planted_in_place_of_folders(state_dir: os.PathLike[str] | str, *, itself: bool = False) -> dict[str, str]:
    """The board's folders (``BOARD_FOLDERS``; ``itself``: ``state_dir`` too) that are there
    but are not plain folders: path -> why board will not use it."""
    found = {}
    for path in ([os.fspath(state_dir)] if itself else []) + [os.path.join(state_dir, name) for name in BOARD_FOLDERS]:
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            continue  # not made yet, or unreachable: nothing planted to report
        if stat.S_ISLNK(mode):
            found[path] = LINKED_FOLDER
        elif not stat.S_ISDIR(mode):
            found[path] = NOT_A_FOLDER
    return found


def confine(root: os.PathLike[str] | str) -> None:
    """Treat every folder below ``root`` as the board's own: never followed if it is a link."""
    absolute = os.path.abspath(root)
    if absolute not in _ROOTS:
        _ROOTS.add(absolute)
        _PARENTS.clear()


def locate(path: os.PathLike[str] | str) -> tuple[str, tuple[str, ...], str] | None:
    """(root, folders between the root and the file, file name) of a path below a registered
    root, taking the outermost root that holds it; None for a path outside every root or a file
    right in a root (nothing between them to follow)."""
    full = os.path.abspath(path)
    parent, name = os.path.split(full)
    try:
        where = _PARENTS[parent]
    except KeyError:
        where = _PARENTS[parent] = _find_root(parent)
        if len(_PARENTS) > _PARENTS_KEPT:
            _PARENTS.pop(next(iter(_PARENTS)))
    if where is None or not where[1]:
        return None
    return where[0], where[1], name


def _find_root(folder: str) -> tuple[str, tuple[str, ...]] | None:
    found = None
    probe = folder
    while True:
        if probe in _ROOTS:
            found = probe
        up = os.path.dirname(probe)
        if up == probe:
            break
        probe = up
    if found is None:
        return None
    below = folder[len(found):].strip(os.sep)
    return found, tuple(below.split(os.sep)) if below else ()


def open_folder(root: str, folders: tuple[str, ...], *, create: bool = False) -> int:
    """A descriptor of ``root/folders...``, reached without following any link below ``root``.
    ``create`` makes missing folders (each with ``mkdirat``, so never through a link)."""
    fd = os.open(root, _DIRECTORY)
    try:
        for depth, folder in enumerate(folders):
            try:
                inner = os.open(folder, _FOLDER_BELOW, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                try:
                    os.mkdir(folder, 0o755, dir_fd=fd)
                except FileExistsError:
                    pass  # made meanwhile by another writer: use it, if it is a folder
                inner = _open_below(root, folders[: depth + 1], fd, folder)
            except OSError as error:
                if error.errno not in (errno.ELOOP, errno.ENOTDIR):
                    raise
                raise _refusal(root, folders[: depth + 1], fd, folder) from None
            os.close(fd)
            fd = inner
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_below(root: str, walked: tuple[str, ...], fd: int, folder: str) -> int:
    try:
        return os.open(folder, _FOLDER_BELOW, dir_fd=fd)
    except OSError as error:
        if error.errno not in (errno.ELOOP, errno.ENOTDIR):
            raise
        raise _refusal(root, walked, fd, folder) from None


def _refusal(root: str, walked: tuple[str, ...], fd: int, folder: str) -> LinkedFolder:
    path = os.path.join(root, *walked)
    try:
        is_link = stat.S_ISLNK(os.stat(folder, dir_fd=fd, follow_symlinks=False).st_mode)
    except OSError:
        is_link = False
    if is_link:
        return LinkedFolder(path, LINKED_FOLDER)
    return LinkedFolder(path, "not a folder", errno.ENOTDIR)


def open_file(path: os.PathLike[str] | str, flags: int, mode: int = 0o644) -> int:
    """``os.open(path, flags, mode)``, with no link followed in the folders below the board's
    root. ``flags`` should hold ``O_NOFOLLOW`` for the file itself. A missing folder is
    FileNotFoundError, as with ``os.open`` (``make_folders`` makes them)."""
    where = locate(path)
    if where is None:
        return os.open(path, flags, mode)
    root, folders, name = where
    fd = open_folder(root, folders)
    try:
        return os.open(name, flags, mode, dir_fd=fd)
    finally:
        os.close(fd)


class OpenFolder:
    """One folder held open while many of its files are opened (a board read whole): each is
    then one ``openat`` of its name, where opening it by its path walks every folder above it
    again (0.49 against 0.41 s for 100,000 task files). The folder is reached as ``open_folder``
    reaches it; a path in another folder is opened as ``open_file`` opens it."""

    def __init__(self, folder: os.PathLike[str] | str) -> None:
        self.given = os.fspath(folder)
        self.path = os.path.abspath(folder)
        where = locate(os.path.join(self.path, "_"))
        self.fd = os.open(self.path, _DIRECTORY) if where is None else open_folder(where[0], where[1])

    def open_file(self, path: os.PathLike[str] | str, flags: int, mode: int = 0o644) -> int:
        """``open_file(path, flags, mode)``, by its name alone when it is in this folder."""
        folder, name = os.path.split(os.fspath(path))
        if folder != self.given and folder != self.path:
            return open_file(path, flags, mode)
        return os.open(name, flags, mode, dir_fd=self.fd)

    def opener(self, path: str, flags: int) -> int:
        """``opener(path, flags)``, by its name alone when it is in this folder."""
        return self.open_file(path, flags | _OPENER_FLAGS)

    def close(self) -> None:
        os.close(self.fd)

    def __enter__(self) -> OpenFolder:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def make_folders(path: os.PathLike[str] | str) -> None:
    """``Path(path).mkdir(parents=True, exist_ok=True)``, never through a link below a root."""
    full = os.path.abspath(path)
    where = locate(os.path.join(full, "_"))
    if where is None:
        os.makedirs(full, exist_ok=True)
        return
    os.close(open_folder(where[0], where[1], create=True))


class _InFolder:
    """A descriptor of the folder holding ``path`` (reached as ``open_folder`` does) and the
    file's name in it; for a path outside every root, the folder opened as it is."""

    def __init__(self, path: os.PathLike[str] | str) -> None:
        where = locate(path)
        if where is None:
            folder, self.name = os.path.split(os.path.abspath(path))
            self.fd = os.open(folder, _DIRECTORY)
        else:
            self.fd = open_folder(where[0], where[1])
            self.name = where[2]

    def __enter__(self) -> _InFolder:
        return self

    def __exit__(self, *_: object) -> None:
        os.close(self.fd)


def replace(source: os.PathLike[str] | str, target: os.PathLike[str] | str) -> None:
    """``os.replace`` of two names in one folder, reached without following links."""
    with _InFolder(target) as folder:
        os.replace(os.path.basename(source), folder.name, src_dir_fd=folder.fd, dst_dir_fd=folder.fd)


def rename(source: os.PathLike[str] | str, target: os.PathLike[str] | str) -> None:
    """``os.rename`` of two names in one folder (a folder may be renamed), without links."""
    with _InFolder(target) as folder:
        os.rename(os.path.basename(source), folder.name, src_dir_fd=folder.fd, dst_dir_fd=folder.fd)


def unlink(path: os.PathLike[str] | str, *, missing_ok: bool = False) -> None:
    """``os.unlink``, never of a file reached through a link in place of a folder."""
    try:
        with _InFolder(path) as folder:
            os.unlink(folder.name, dir_fd=folder.fd)
    except FileNotFoundError:
        if not missing_ok:
            raise


def make_folder(path: os.PathLike[str] | str, mode: int = 0o755) -> None:
    """``os.mkdir`` of one folder (FileExistsError if there), its parent reached without links."""
    with _InFolder(path) as folder:
        os.mkdir(folder.name, mode, dir_fd=folder.fd)


def remove_folder(path: os.PathLike[str] | str) -> None:
    """``os.rmdir`` of one empty folder, its parent reached without links."""
    with _InFolder(path) as folder:
        os.rmdir(folder.name, dir_fd=folder.fd)


def fsync_folder(path: os.PathLike[str] | str) -> None:
    """fsync the folder ``path`` itself, reached without following links below a root."""
    full = os.path.abspath(path)
    where = locate(os.path.join(full, "_"))
    fd = os.open(full, _DIRECTORY) if where is None else open_folder(where[0], where[1])
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def folder_fd_of(path: os.PathLike[str] | str) -> tuple[int, str]:
    """(descriptor of the folder holding ``path``, the file's name): for calls that take a
    folder descriptor themselves (``renameat2``). The caller closes the descriptor."""
    folder = _InFolder(path)
    return folder.fd, folder.name


def opener(path: str, flags: int) -> int:
    """For ``open(path, mode, opener=opener)``: the file opened as ``open_file`` does, never
    through a link (itself or a folder), never blocking on a FIFO."""
    return open_file(path, flags | _OPENER_FLAGS, 0o644)


def read_from(fd: int, offset: int = 0, most: int = -1) -> bytes:
    """What ``fd`` holds from ``offset`` on, at most ``most`` bytes (-1: to its end), read a
    mebibyte at a time (a limit far above what is there costs no buffer of its size)."""
    chunks: list[bytes] = []
    while most:
        chunk = os.pread(fd, 1 << 20 if most < 0 else min(most, 1 << 20), offset)
        if not chunk:
            break
        chunks.append(chunk)
        offset += len(chunk)
        most = most - len(chunk) if most > 0 else most
    return b"".join(chunks)


def read_if_regular(path: os.PathLike[str] | str, most: int) -> bytes | None:
    """At most ``most`` bytes of the regular file at ``path`` (reached as ``opener`` reaches
    it); None when there is none to read: missing, unreadable, or something else planted there
    (a FIFO, which is never waited on, a device, a link)."""
    try:
        fd = opener(os.fspath(path), os.O_RDONLY)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return read_from(fd, 0, max(most, 0))
    except OSError:
        return None
    finally:
        os.close(fd)


def link(source: os.PathLike[str] | str, target: os.PathLike[str] | str) -> None:
    """``os.link`` of a file to a new name in the same folder (FileExistsError if taken), the
    folder reached without links and the source never followed if it is one."""
    with _InFolder(target) as folder:
        os.link(os.path.basename(source), folder.name, src_dir_fd=folder.fd, dst_dir_fd=folder.fd, follow_symlinks=False)
