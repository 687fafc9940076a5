"""Command-line tools from npm that the tests run for real (Claude Code, ccusage): each installed
once, pinned, into the user's cache, and reused by every later run."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

#: An install from the registry on a slow connection; the tests skip past it, saying so.
INSTALL_TIMEOUT = 600


class Unavailable(Exception):
    """Why a tool cannot be had here (the tests skip with this)."""


@dataclass(frozen=True)
class NpmTool:
    package: str
    version: str
    #: Its folder under ``~/.cache/board-tests/``.
    folder: str
    #: The program it puts in ``node_modules/.bin/``.
    command: str
    #: Whether ``command --version`` prints the version; else the installed package.json says it
    #: (a program that starts a server or a browser when run bare).
    says_version: bool = True

    def install_dir(self) -> Path:
        cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        return Path(cache) / "board-tests" / self.folder

    def executable(self) -> Path:
        return self.install_dir() / "node_modules" / ".bin" / self.command

    def works(self) -> bool:
        """Whether the installed program runs and is the pinned version."""
        if not self.says_version:
            try:
                installed = json.loads((self.install_dir() / "node_modules" / self.package / "package.json").read_text())
            except (OSError, ValueError):
                return False
            return self.executable().exists() and installed.get("version") == self.version
        try:
            done = subprocess.run([str(self.executable()), "--version"], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired):
            return False
        return done.returncode == 0 and self.version in done.stdout

    def ensure_installed(self) -> Path:
        """The installed program, installed now if it is not yet (under a lock, so two test
        processes never install at once); ``Unavailable`` with the reason when it cannot be."""
        program = self.executable()
        if program.exists() and self.works():
            return program
        for needed in ("node", "npm"):
            if shutil.which(needed) is None:
                raise Unavailable(f"{needed} not found on PATH: cannot install {self.package}@{self.version}")
        folder = self.install_dir()
        folder.mkdir(parents=True, exist_ok=True)
        with open(folder.parent / f".{folder.name}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if program.exists() and self.works():
                return program
            try:
                done = subprocess.run(
                    ["npm", "install", "--prefix", str(folder), "--no-audit", "--no-fund", "--loglevel=error", f"{self.package}@{self.version}"],
                    capture_output=True, text=True, timeout=INSTALL_TIMEOUT, stdin=subprocess.DEVNULL,
                )  # fmt: skip
            except subprocess.TimeoutExpired:
                raise Unavailable(f"npm install {self.package}@{self.version} took over {INSTALL_TIMEOUT} s") from None
            if done.returncode != 0 or not self.works():
                last = (done.stderr.strip().splitlines() or [f"installed, but '{self.command} --version' fails"])[-1]
                raise Unavailable(f"cannot install {self.package}@{self.version} with npm: {last}")
        return program
