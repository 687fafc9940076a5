"""The MCP server's list of tools, kept between starts in the user's cache.

Listing board's tools through the SDK builds every tool's argument and answer models and their
JSON schemas: about 100 ms, more than everything else board does to start serving. The listing
depends only on the code that makes it, so it is kept under a key made of that code (each of
board's modules by size and change time, the SDK's and pydantic's, Python's version) and made
again whenever any of it changes. A cache that cannot be read or written is made without.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

from mcp.types import Tool

from board.disk.atomic import read_regular, write_atomic

PREFIX = "mcp-tools-"
#: The largest listing read back (board's is about 100 KB).
MAX_LISTING_BYTES = 16 * 1024 * 1024


async def cached(build: Callable[[], Awaitable[list[Tool]]]) -> list[Tool]:
    """The listing kept for this code, else ``build()``'s, kept for the next start."""
    path = cache_dir() / f"{PREFIX}{code_key()}.json"
    try:
        return [Tool.model_validate(tool) for tool in json.loads(read_regular(path, MAX_LISTING_BYTES))]
    except (OSError, ValueError):  # none yet, or not a listing (pydantic's errors are ValueErrors)
        pass
    tools = await build()
    _keep(path, [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in tools])
    return tools


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "board"


def code_key(packages: list[Path] | None = None) -> str:
    """The key of the code under ``packages`` (default: board, the SDK and pydantic)."""
    if packages is None:
        import mcp
        import mcp_types
        import pydantic

        packages = [Path(__file__).resolve().parents[1], Path(mcp.__file__).parent, Path(mcp_types.__file__).parent, Path(pydantic.__file__).parent]
    digest = hashlib.sha256(sys.version.encode())
    for package in packages:
        for path, size, changed in sorted(_modules(package)):
            digest.update(f"{path}\0{size}\0{changed}\n".encode())
    return digest.hexdigest()[:32]


def _modules(folder: Path) -> list[tuple[str, int, int]]:
    """Each Python module under ``folder``: its path, size and change time."""
    found: list[tuple[str, int, int]] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return found
    for entry in entries:
        if entry.is_dir(follow_symlinks=False) and entry.name != "__pycache__":
            found.extend(_modules(Path(entry.path)))
        elif entry.name.endswith(".py"):
            stat = entry.stat()
            found.append((entry.path, stat.st_size, stat.st_mtime_ns))
    return found


def _keep(path: Path, listing: list[dict]) -> None:
    """Write the listing (atomically), and drop the ones other code made."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, json.dumps(listing, ensure_ascii=False).encode("utf-8"), lasting=False)
        for old in path.parent.glob(f"{PREFIX}*.json"):
            if old != path:
                old.unlink(missing_ok=True)
    except OSError:
        pass
