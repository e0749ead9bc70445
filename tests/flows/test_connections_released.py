"""A session that closes lets go of its provider connections: a process that opens session after
session (the TUI switching sessions, the MCP server, these tests) does not gather open sockets."""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit

from tests.helpers.openai_server import text


def connections_to(port: int) -> int:
    """This process's open TCP connections whose far end is ``port`` (client side only)."""
    inodes = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:[") : -1])
    count = 0
    for table in ("/proc/self/net/tcp", "/proc/self/net/tcp6"):
        if not Path(table).exists():
            continue
        for row in Path(table).read_text().splitlines()[1:]:
            fields = row.split()
            remote_port = int(fields[2].rsplit(":", 1)[1], 16)
            if remote_port == port and fields[9] in inodes:
                count += 1
    return count


def test_each_send_closes_the_connections_it_opened(ccm):
    port = urlsplit(ccm.server.base_url).port
    assert port is not None
    for i in range(4):
        ccm.server.push(text(f"Reply {i}."))
        out = ccm.send(f"message {i}")
        assert out["reply"] == f"Reply {i}."
    assert connections_to(port) == 0
