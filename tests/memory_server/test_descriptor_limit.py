"""``--all-sessions`` under a small descriptor limit (issue 33, hole 3): one reader stayed open per session for the
server's life (about six descriptors each), so past ~40 sessions under 256 descriptors sessions were skipped with
"Too many open files", then ``status`` said "no sessions yet". The readers are now bounded (the ones used last
stay open), and an error while listing the sessions is said as one, never as "none"."""

from __future__ import annotations

import errno
import json
import resource
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ccm_tui.config import Settings
from tests.helpers.mcp_session import INITIALIZE, read_answers, server_params, sessions_root, tool_call

SESSIONS = 60
LIMIT = 64  # descriptors: (60 sessions × 6) would need 360 with every reader kept open


def many_sessions(template: Path, count: int) -> list[str]:
    """``count`` copies of the built session, each with a word of its own in its ambient chat."""
    names = [f"s{i:03d}" for i in range(count)]
    for i, name in enumerate(names):
        shutil.copytree(template, sessions_root() / name)
        record = {"role": "user", "content": f"the password of vault quux{i:03d} is here", "ts": "2026-01-02T00:00:00Z"}
        with open(sessions_root() / name / "raw.jsonl", "a", encoding="utf-8") as raw:
            raw.write(json.dumps(record) + "\n")
    return names


def limited(descriptors: int):
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (descriptors, descriptors))

    return apply


def exchange(lines: list[dict[str, Any]], descriptors: int, *args: str) -> tuple[dict[Any, dict[str, Any]], str]:
    """The answers (by id) of a real ``ccm-tui mcp --all-sessions`` run under a descriptor limit: every line
    written, then answers read until each request is answered (or the server ends), then stdin closed."""
    params = server_params("--all-sessions", *args)
    proc = subprocess.Popen(
        [params.command, *params.args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=params.env,
        cwd=params.cwd,
        preexec_fn=limited(descriptors),
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    proc.stdin.write("".join(json.dumps(line) + "\n" for line in [*INITIALIZE, *lines]))
    proc.stdin.flush()
    wanted = {1} | {line["id"] for line in lines}
    out, _ = read_answers(proc.stdout, wanted, 600)
    answers = {answer.get("id"): answer for answer in out}
    proc.stdin.close()
    errors = proc.stderr.read()
    assert proc.wait(timeout=60) == 0, errors
    return answers, errors


def text_of(answer: dict[str, Any]) -> str:
    return answer["result"]["content"][0]["text"]


def test_every_session_is_searchable_and_status_right_under_a_small_descriptor_limit(template):
    names = many_sessions(template, SESSIONS)
    probes = [7, 33, 59]
    lines = [tool_call(2, "status"), tool_call(3, "search", query="vault", limit=25)]
    lines += [tool_call(10 + i, "search", query=f"quux{i:03d}") for i in probes]
    lines += [tool_call(20 + i, "list", session=names[i]) for i in probes]
    by_id, errors = exchange(lines, LIMIT)
    status = text_of(by_id[2])
    assert status.startswith(f"{SESSIONS} session(s)") and "unreadable" not in status
    assert all(f"\n{name} · 1 efforts, 0 open" in status for name in names)
    assert "skipped" not in text_of(by_id[3]) and text_of(by_id[3]).startswith("25 found")
    for i in probes:
        found = text_of(by_id[10 + i])
        assert f"session {names[i]}" in found and "skipped" not in found, found
        assert not by_id[20 + i]["result"]["isError"], text_of(by_id[20 + i])
    assert "Too many open files" not in errors and "Traceback" not in errors


def test_an_error_listing_the_sessions_is_an_error_not_none(template, monkeypatch):
    from ccm_tui.memory_server.reads import Reads
    from ccm_tui.memory_server.scope import InputError, Scope

    many_sessions(template, 3)
    reads = Reads(Scope(root=sessions_root()), Settings())
    assert reads.status().startswith("3 session(s)")
    real = Path.iterdir

    def exhausted(self: Path):
        if self == sessions_root():
            raise OSError(errno.EMFILE, "Too many open files", str(self))
        return real(self)

    monkeypatch.setattr(Path, "iterdir", exhausted)
    for ask in (reads.status, lambda: reads.search("vault", 10), lambda: reads.list("any", 10, 0, "s001")):
        with pytest.raises(InputError) as said:
            ask()
        message = str(said.value)
        assert "cannot list the sessions in the sessions directory: too many open files" in message
        assert "no sessions yet" not in message and str(sessions_root()) not in message
    reads.close()


def test_the_readers_kept_open_are_a_share_of_the_limit():
    from ccm_tui.memory_server.reads import readers_kept

    assert readers_kept(256) == 10 and readers_kept(64) == 2 and readers_kept(1 << 20) == 64
