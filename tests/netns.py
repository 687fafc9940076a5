"""Several machines on one: each a Linux network namespace with a link of its own to this one.

A process started in a machine (``Machine.popen``) has its own network stack: its 127.0.0.1 is
its own, and it reaches this host only through its link, at ``Machine.host_address``. Cutting
the link (``Machine.cut``) is a network partition where packets vanish (a peer waits for its
timeouts); ``Machine.refuse`` takes the machine's route away, so its connections fail at once;
``heal`` ends either. Needs root and iproute2; ``Machines.available()`` says why not when they
are missing.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


def _ip(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)


@dataclass
class Machine:
    name: str
    namespace: str
    link: str  # the host's end of the link
    host_address: str  # this host, as the machine reaches it
    address: str  # the machine itself
    peer: str = ""  # the machine's end of the link, inside its namespace

    def popen(self, argv: Sequence[str], **kwargs: object) -> subprocess.Popen:
        return subprocess.Popen(["ip", "netns", "exec", self.namespace, *argv], **kwargs)  # type: ignore[call-overload]

    def run(self, argv: Sequence[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["ip", "netns", "exec", self.namespace, *argv], capture_output=True, text=True, **kwargs)  # type: ignore[call-overload]

    def cut(self) -> None:
        """Take the link down: nothing passes either way until ``heal``."""
        _ip("link", "set", self.link, "down")

    def refuse(self) -> None:
        """Take the machine's end of the link down: with it goes its route to this host, so
        every connection it tries fails at once (network unreachable) until ``heal``."""
        _ip("-n", self.namespace, "link", "set", self.peer, "down")

    def heal(self) -> None:
        """Both ends up again (the machine's route comes back with its end)."""
        _ip("link", "set", self.link, "up")
        if self.peer:
            _ip("-n", self.namespace, "link", "set", self.peer, "up")


class Machines:
    """``count`` machines, each linked to this host over a /30 of its own; all removed on close."""

    def __init__(self, count: int) -> None:
        self.machines: list[Machine] = []
        tag = os.getpid() % 100_000
        # A second octet no address on this host uses yet: runs side by side do not collide.
        taken = _ip("-4", "-o", "addr").stdout
        for _ in range(50):
            octet = random.randint(64, 250)
            if f" 10.{octet}." not in taken:
                break
        try:
            for i in range(count):
                namespace, link, peer = f"board-{tag}-m{i}", f"bh{tag}m{i}", f"bp{tag}m{i}"
                host_address, address = f"10.{octet}.{i}.1", f"10.{octet}.{i}.2"
                for args in (
                    ("netns", "add", namespace),
                    ("link", "add", link, "type", "veth", "peer", "name", peer),
                    ("link", "set", peer, "netns", namespace),
                    ("addr", "add", f"{host_address}/30", "dev", link),
                    ("link", "set", link, "up"),
                    ("-n", namespace, "addr", "add", f"{address}/30", "dev", peer),
                    ("-n", namespace, "link", "set", peer, "up"),
                    ("-n", namespace, "link", "set", "lo", "up"),
                ):
                    done = _ip(*args)
                    if done.returncode != 0:
                        raise RuntimeError(f"ip {' '.join(args)}: {done.stderr.strip()}")
                    if args[:2] == ("netns", "add"):
                        self.machines.append(Machine(f"machine-{i}", namespace, link, host_address, address, peer))
        except BaseException:
            self.close()
            raise

    @staticmethod
    def available() -> str | None:
        """None when machines can be made here, else why not."""
        if shutil.which("ip") is None:
            return "iproute2's ip is not installed"
        if os.geteuid() != 0:
            return "making network namespaces needs root"
        probe = f"board-probe-{os.getpid()}"
        made = _ip("netns", "add", probe)
        if made.returncode != 0:
            return f"cannot make a network namespace: {made.stderr.strip()}"
        _ip("netns", "del", probe)
        return None

    def close(self) -> None:
        for machine in self.machines:
            _ip("link", "del", machine.link)  # takes the peer with it
            _ip("netns", "del", machine.namespace)
        self.machines = []

    def __enter__(self) -> list[Machine]:
        return self.machines

    def __exit__(self, *exc: object) -> None:
        self.close()


def listen_also_on(data_dir: Path, addresses: Sequence[str], network: str) -> None:
    """Make a (stopped) test cluster listen on ``addresses`` too and trust ``network``."""
    with open(data_dir / "postgresql.conf", "a", encoding="utf-8") as conf:
        conf.write(f"listen_addresses = '{','.join(['127.0.0.1', *addresses])}'\n")
    with open(data_dir / "pg_hba.conf", "a", encoding="utf-8") as hba:
        hba.write(f"host  all  all  {network}  trust\n")
