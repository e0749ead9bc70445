"""``ccm-tui mcp`` starts fast and stays light: neither the command nor any of its tools (writes included)
imports litellm or textual."""

from __future__ import annotations

import subprocess
import sys

from tests.helpers.mcp_session import ROOT

SCRIPT = """
import asyncio, io, sys
from pathlib import Path
from ccm_tui.cli import main

sys.stdin = io.TextIOWrapper(io.BytesIO(b""))  # the client hangs up at once
assert main(["mcp", "--session-dir", sys.argv[1], "--allow-writes"]) == 0

from ccm_tui.config import load_settings
from ccm_tui.memory_server import Scope, ServerOptions, build_server

server, reads, writes = build_server(ServerOptions(Scope(directory=Path(sys.argv[1])), load_settings(), allow_writes=True))

async def calls():
    for name, args in [("search", {"query": "axolotl"}), ("read", {"id": "auth-bug", "around_line": 3}),
                       ("list", {}), ("status", {}), ("remember", {"text": "a note"}), ("reopen", {"id": "auth-bug"})]:
        result = await server.call_tool(name, args)
        assert not result.is_error, (name, result)
    await writes.close()
    reads.close()

asyncio.run(calls())
bad = [m for m in ("litellm", "textual", "openai") if m in sys.modules]
sys.stderr.write(repr(bad))
sys.exit(1 if bad else 0)
"""


def test_the_mcp_command_and_its_tools_import_neither_litellm_nor_textual(session_dir):
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(session_dir)], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.endswith("[]")
