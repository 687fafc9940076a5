"""Cost of one git check: gathering the git state and evaluating every alert, 10,000 files vs 100.

Each repository has a bare upstream one commit ahead (so the behind/diff path runs), a few
dirty and untracked files, and 20 active tasks holding files. Run:

    PYTHONPATH=. python tests/bench/bench_git_check.py [--files 10000 100] [--repeat 7]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from board.alerts import refresh_alerts
from board.config import BoardSettings
from board.gitstate import gather_git_state
from board.model import utcnow
from board.store import Store


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, timeout=600)


def build(root: Path, count: int) -> Path:
    """A clone with ``count`` tracked files, behind its upstream by one commit, with a board."""
    upstream, work, other = root / "up.git", root / "work", root / "other"
    git(root, "init", "-q", "--bare", "-b", "main", str(upstream))
    git(root, "clone", "-q", str(upstream), str(work))
    for clone in (work,):
        git(clone, "config", "user.name", "bench")
        git(clone, "config", "user.email", "bench@example.invalid")
    git(work, "checkout", "-q", "-b", "main")
    for index in range(count):
        directory = work / "src" / f"pkg{index // 100:03d}"
        directory.mkdir(parents=True, exist_ok=True)
        (directory / f"mod{index:05d}.py").write_text(f"value = {index}\n")
    (work / ".gitignore").write_text(".tasks/\n")
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "files")
    git(work, "push", "-q", "-u", "origin", "main")
    git(root, "clone", "-q", str(upstream), str(other))
    git(other, "config", "user.name", "other")
    git(other, "config", "user.email", "other@example.invalid")
    (other / "src" / "pkg000" / "mod00000.py").write_text("changed upstream\n")
    git(other, "commit", "-q", "-am", "upstream change")
    git(other, "push", "-q", "origin", "main")
    git(work, "fetch", "-q")
    for index in range(0, min(count, 50), 10):
        (work / "src" / f"pkg{index // 100:03d}" / f"mod{index:05d}.py").write_text("dirty\n")
    (work / "scratch.txt").write_text("untracked\n")
    store = Store.open(work, create=True)
    for index in range(20):
        file = f"src/pkg{(index * 7 % count) // 100:03d}/mod{index * 7 % count:05d}.py"
        task = store.create(f"task {index}", files=[file])
        store.claim_task(task.id, f"agent{index}")
    return work


def measure(work: Path, repeat: int) -> tuple[float, float]:
    settings = BoardSettings()
    store = Store.open(work)
    gather, full = [], []
    for _ in range(repeat):
        started = time.perf_counter()
        gather_git_state(work, work / ".tasks")
        gather.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        refresh_alerts(store, now=utcnow(), settings=settings)
        full.append((time.perf_counter() - started) * 1000)
    return statistics.median(gather), statistics.median(full)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, nargs="+", default=[10000, 100])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    os.environ.setdefault("GIT_CONFIG_NOSYSTEM", "1")
    with tempfile.TemporaryDirectory() as temp:
        os.environ["HOME"] = temp
        for count in args.files:
            root = Path(temp) / f"repo{count}"
            root.mkdir()
            built = time.perf_counter()
            work = build(root, count)
            setup = time.perf_counter() - built
            gather_ms, full_ms = measure(work, args.repeat)
            alerts = refresh_alerts(Store.open(work), now=utcnow(), settings=BoardSettings())
            kinds = sorted({a.kind + ":" + a.severity for a in alerts})
            print(
                f"{count:>6} files: git state {gather_ms:7.1f} ms, git state + all detectors + alerts.json {full_ms:7.1f} ms "
                f"(median of {args.repeat}; setup {setup:.1f} s; alerts {', '.join(kinds)})"
            )


if __name__ == "__main__":
    main()
