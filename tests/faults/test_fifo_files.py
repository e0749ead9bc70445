"""A FIFO (or another non-regular file) in place of a session file is refused with one line,
never waited on forever (issue 25, item 10)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.helpers.openai_server import call, text, tool_calls

FILES = [
    "manifest.yaml",
    "events.jsonl",
    "raw.jsonl",
    "session_state.json",
    "expanded.json",
    "efforts/trip.jsonl",
    "derived.sqlite",
    ".lock",
]


def run_cli(*argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    return subprocess.run(
        [sys.executable, "-m", "ccm_tui.cli", *argv], capture_output=True, text=True, timeout=60, env=env
    )


@pytest.mark.parametrize("relative", FILES)
def test_a_fifo_in_place_of_a_session_file_is_refused_not_waited_on(ccm, relative):
    ccm.server.push(tool_calls(call("open_effort", {"name": "trip"})), text("Opened."))
    ccm.send("plan a trip")
    ccm.run("search", "--session-dir", str(ccm.dir), "trip")  # derived.sqlite exists
    path = ccm.dir / relative
    path.unlink(missing_ok=True)
    os.mkfifo(path)
    for argv in (("status",), ("search", "trip"), ("repair", "--force")):
        done = run_cli(argv[0], "--session-dir", str(ccm.dir), *argv[1:])  # a hang fails on the timeout
        if done.returncode != 0:
            assert "Traceback" not in done.stderr
            assert len(done.stderr.strip().splitlines()) == 1, done.stderr
            assert "not a regular file" in done.stderr, (argv, done.stderr)
