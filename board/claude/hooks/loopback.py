"""Who holds a TCP socket on 127.0.0.1, as the kernel says (``/proc/net/tcp``, Linux).

``board hooks serve`` answers only its own user: the kernel records the owner of each socket,
so the user behind a connection to the server is known without anything the client could
forge or leak (no secret in a header, no token in a settings file). The same table says who
listens on a port: board's own server, nobody, or another user's process squatting it.

Standard library only: the hook reads it at the start of a session.
"""

from __future__ import annotations

import socket
import sys

PROC_NET_TCP = "/proc/net/tcp"
#: A listener on every IPv6 address (or on 127.0.0.1 mapped into IPv6) takes IPv4 loopback
#: connections too.
PROC_NET_TCP6 = "/proc/net/tcp6"
_ANY_V6 = "0" * 32
_LOOPBACK_MAPPED_V6 = "0000000000000000FFFF0000" + f"{int.from_bytes(socket.inet_aton('127.0.0.1'), sys.byteorder):08X}"
_LISTEN = "0A"


def _address(host: str, port: int) -> str:
    """An IPv4 address as ``/proc/net/tcp`` writes it: the 32-bit address in the machine's own
    byte order, then the port, both in upper-case hex."""
    packed = int.from_bytes(socket.inet_aton(host), sys.byteorder)
    return f"{packed:08X}:{port:04X}"


def _rows(path: str = PROC_NET_TCP) -> list[list[str]] | None:
    try:
        with open(path, encoding="ascii") as table:
            lines = table.read().splitlines()[1:]
    except (OSError, UnicodeDecodeError):
        return None
    return [line.split() for line in lines]


def available() -> bool:
    """Whether this system says who holds a socket (Linux with /proc mounted)."""
    return _rows() is not None


def peer_uid(client: tuple[str, int], server: tuple[str, int]) -> int | None:
    """The uid owning the client end of a connection to ``server``, or None when the table
    has no such connection (or the system keeps no table)."""
    local, remote = _address(*client), _address(*server)
    for row in _rows() or ():
        if len(row) > 7 and row[1] == local and row[2] == remote and row[7].isdigit():
            return int(row[7])
    return None


def listener_uid(port: int) -> int | None:
    """The uid of whatever listens on ``port`` of 127.0.0.1 (or of every address), or None when
    nothing does."""
    wanted = {_address("127.0.0.1", port), _address("0.0.0.0", port)}
    for row in _rows() or ():
        if len(row) > 7 and row[3] == _LISTEN and row[1] in wanted and row[7].isdigit():
            return int(row[7])
    wanted_v6 = {f"{_ANY_V6}:{port:04X}", f"{_LOOPBACK_MAPPED_V6}:{port:04X}"}
    for row in _rows(PROC_NET_TCP6) or ():
        if len(row) > 7 and row[3] == _LISTEN and row[1] in wanted_v6 and row[7].isdigit():
            return int(row[7])
    return None
