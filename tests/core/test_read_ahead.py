"""Files read by a child process (``board.disk.read_ahead``) come back as reading them here
would give them: the same bytes, the same refusals, in the order asked, even when the child
stops short. Each case runs in a fresh interpreter, which has no other thread, so the child is
forked (pytest's own process may run threads, where ``read_ahead`` reads in-process)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

SCRIPT = r"""
import json, os, sys
from pathlib import Path
import board.disk.read_ahead as read_ahead
from board.disk.confine import OpenFolder, confine

folder, stop_after = Path(sys.argv[1]), int(sys.argv[2])
confine(folder)
paths = [folder / name for name in json.loads(sys.argv[3])]
forks = []
real_fork = os.fork
def counted_fork():
    forks.append(1)
    return real_fork()
os.fork = counted_fork
if stop_after >= 0:  # the child sends this many files, then dies
    real_send = read_ahead._send
    read_ahead._send = lambda fd, paths, limit, folder: (real_send(fd, paths[:stop_after], limit, folder), os._exit(9))

def described(read):
    if read is None or isinstance(read, bytes):
        return None if read is None else read.decode()
    return [type(read).__name__, str(read), read.errno]

with OpenFolder(folder) as held:
    ahead = [described(read) for read in read_ahead.read_ahead(paths, limit=2048, folder=held)]
    here = [described(read) for read in read_ahead._read_here(paths, 2048, held)]
print(json.dumps({"forks": len(forks), "ahead": ahead, "here": here}))
"""


def read_through_a_child(folder: Path, names: list[str], *, stop_after: int = -1) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(folder), str(stop_after), json.dumps(names)],
        capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def a_folder_of_every_kind(tmp_path: Path) -> tuple[Path, list[str]]:
    folder = tmp_path / ".tasks"
    folder.mkdir()
    names = []
    for n in range(2500):
        (folder / f"task_{n}.json").write_text(f'{{"id": "{n}"}}')
        names.append(f"task_{n}.json")
    (folder / "big.json").write_text("x" * 5000)
    os.mkfifo(folder / "fifo.json")
    (folder / "link.json").symlink_to(folder / "task_1.json")
    (folder / "sub").mkdir()
    (folder / "sub" / "inner.json").write_text("inner")
    (folder / "linked").symlink_to(tmp_path)
    names[700:700] = ["big.json", "fifo.json", "missing.json", "link.json", "sub/inner.json", "linked/x.json", "sub"]
    return folder, names


def test_a_child_reads_what_this_process_would_read_in_the_same_order(tmp_path: Path) -> None:
    folder, names = a_folder_of_every_kind(tmp_path)
    read = read_through_a_child(folder, names)
    assert read["forks"] == 1
    assert read["ahead"] == read["here"]
    assert read["ahead"][0] == '{"id": "0"}' and read["ahead"][-1] == '{"id": "2499"}'
    kinds = {name: result for name, result in zip(names, read["ahead"], strict=True) if not isinstance(result, str)}
    assert kinds["missing.json"] is None
    assert kinds["big.json"][0] == "SpecialFile" and "limit is 2,048" in kinds["big.json"][1]
    assert kinds["fifo.json"][0] == "SpecialFile" and "FIFO" in kinds["fifo.json"][1]
    assert kinds["link.json"][0] == "SpecialFile" and "symbolic link" in kinds["link.json"][1]
    assert kinds["linked/x.json"][0] == "LinkedFolder" and kinds["linked/x.json"][1].startswith(f"{folder / 'linked'}: ")
    assert kinds["sub"][0] == "SpecialFile"
    assert read["ahead"][names.index("sub/inner.json")] == "inner"


def test_what_a_child_that_stops_short_did_not_send_is_read_here(tmp_path: Path) -> None:
    folder, names = a_folder_of_every_kind(tmp_path)
    read = read_through_a_child(folder, names, stop_after=703)
    assert read["forks"] == 1
    assert read["ahead"] == read["here"]
    assert len(read["ahead"]) == len(names)


def test_few_files_are_read_here_without_a_child(tmp_path: Path) -> None:
    folder, names = a_folder_of_every_kind(tmp_path)
    read = read_through_a_child(folder, names[:50])
    assert read["forks"] == 0 and read["ahead"] == read["here"]
