"""A reader that closes the pipe early (``ccm-tui … | head -1``) ends the command quietly."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENTRY = "from ccm_tui.cli import entry; entry()"


def run_into_closed_pipe(*argv: str) -> subprocess.CompletedProcess[str]:
    """Run the console script with its stdout a pipe whose reader is already gone."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run(
            [sys.executable, "-c", ENTRY, *argv],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
    finally:
        os.close(write_end)


@pytest.fixture
def session(tmp_path: Path) -> Path:
    (tmp_path / "s" / "efforts").mkdir(parents=True)
    return tmp_path / "s"


@pytest.mark.parametrize(
    "argv",
    [
        ("status",),
        ("status", "--json"),
        ("search", "auth"),
        ("search", "--json", "auth"),
        ("--help",),
    ],
)
def test_a_closed_stdout_ends_the_command_quietly(session: Path, argv: tuple[str, ...]):
    done = run_into_closed_pipe(argv[0], "--session-dir", str(session), *argv[1:])
    assert done.stderr == ""
    assert "Broken pipe" not in done.stderr
    assert done.returncode in (0, 141)
