"""``--all-sessions`` under a small descriptor limit.

Issue 33, hole 3: one reader stayed open per session for the server's life, so past ~40 sessions
under 256 descriptors sessions were skipped with "Too many open files", then ``status`` said "no
sessions yet". The readers are bounded, and an error while listing the sessions is said as one.

Then the server stopped answering altogether: a write opens its session's controller, whose thread
made its event loop itself; with no descriptor left for the loop (EMFILE) the thread died and the
server's own loop waited for it forever. Now the loop is made by the caller, every request gets an
answer (results, or one line saying what to do), what a failed request opened is closed, and the
next request is served. The readers in use (parallel requests) and the write controllers count
against the limit too. A request left unanswered fails the test at a deadline, never by hanging it.
"""

from __future__ import annotations

import errno
import json
import os
import resource
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ccm_tui.config import Settings
from tests.helpers.mcp_session import INITIALIZE, read_answers, server_params, sessions_root, tool_call

SESSIONS = 60
LIMIT = 64  # descriptors: (60 sessions × 4) would need 240 with every reader kept open
ANSWER_WAIT = 180  # seconds for every request of a batch to be answered (a hang fails there)


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


class LimitedServer:
    """A real ``ccm-tui mcp --all-sessions`` under a descriptor limit, asked batch after batch."""

    def __init__(self, descriptors: int | None, *args: str) -> None:
        params = server_params("--all-sessions", *args)
        self.proc = subprocess.Popen(
            [params.command, *params.args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=params.env,
            cwd=params.cwd,
            preexec_fn=limited(descriptors) if descriptors else None,
        )
        self.ask(INITIALIZE[:1], tuple(INITIALIZE[1:]))

    def ask(self, lines: list[dict[str, Any]], then: tuple[dict[str, Any], ...] = ()) -> dict[Any, dict[str, Any]]:
        """Every line written at once (then ``then``, notifications), and the answers by id once each
        request is answered; the test fails when one is not within ANSWER_WAIT seconds."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(b"".join(json.dumps(line).encode() + b"\n" for line in [*lines, *then]))
        self.proc.stdin.flush()
        wanted = {line["id"] for line in lines}
        out, _ = read_answers(self.proc.stdout, wanted, ANSWER_WAIT)
        answers = {a.get("id"): a for a in out}
        missing = sorted(wanted - set(answers), key=str)
        if missing:
            self.kill()
            pytest.fail(f"no answer to request(s) {missing} within {ANSWER_WAIT} s: the server stopped answering")
        return answers

    def pid_descriptors(self) -> int:
        return len(os.listdir(f"/proc/{self.proc.pid}/fd"))

    def close(self) -> str:
        """Stdin closed; the server must end by itself. Its stderr."""
        assert self.proc.stdin is not None and self.proc.stderr is not None
        self.proc.stdin.close()
        try:
            code = self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.kill()
            pytest.fail("the server did not end after stdin closed")
        errors = self.proc.stderr.read().decode("utf-8", "replace")
        assert code == 0, errors
        return errors

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait()


def text_of(answer: dict[str, Any]) -> str:
    return answer["result"]["content"][0]["text"]


def answered(answer: dict[str, Any]) -> tuple[bool, str]:
    """(is it an error, its text); an error is one line saying why, never a bare "Error executing tool"."""
    result = answer["result"]
    text = text_of(answer)
    if result["isError"]:
        assert "\n" not in text and not text.rstrip().endswith(("tool remember", "tool search", "tool read")), text
    return result["isError"], text


def assert_quiet(errors: str) -> None:
    """Nothing on stderr but the one-line warnings: no traceback, no "never awaited", no "ignored"."""
    for said in ("Traceback", "Too many open files:", "never awaited", "Exception ignored"):
        assert said not in errors, errors


def test_every_session_is_searchable_and_status_right_under_a_small_descriptor_limit(template):
    names = many_sessions(template, SESSIONS)
    probes = [7, 33, 59]
    lines = [tool_call(2, "status"), tool_call(3, "search", query="vault", limit=25)]
    lines += [tool_call(10 + i, "search", query=f"quux{i:03d}") for i in probes]
    lines += [tool_call(20 + i, "list", session=names[i]) for i in probes]
    server = LimitedServer(LIMIT)
    by_id = server.ask(lines)
    errors = server.close()
    status = text_of(by_id[2])
    assert status.startswith(f"{SESSIONS} session(s)") and "unreadable" not in status
    assert all(f"\n{name} · 1 efforts, 0 open" in status for name in names)
    assert "skipped" not in text_of(by_id[3]) and text_of(by_id[3]).startswith("25 found")
    for i in probes:
        found = text_of(by_id[10 + i])
        assert f"session {names[i]}" in found and "skipped" not in found, found
        assert not by_id[20 + i]["result"]["isError"], text_of(by_id[20 + i])
    assert_quiet(errors)


def test_parallel_reads_of_more_sessions_than_fit_are_all_answered_with_results(template):
    """Twenty requests at once, each on a session of its own: the readers in use count against the limit
    (they waited for none before, and ran the process out of descriptors)."""
    names = many_sessions(template, 24)
    lines = [tool_call(100 + i, "read", session=name, id="ambient") for i, name in enumerate(names[:12])]
    lines += [tool_call(200 + i, "search", query=f"quux{i:03d}", session=names[i]) for i in range(12, 24)]
    lines += [tool_call(300, "search", query="vault", limit=25), tool_call(301, "status")]
    server = LimitedServer(32)
    by_id = server.ask(lines)
    errors = server.close()
    for request in lines:
        failed, text = answered(by_id[request["id"]])
        assert not failed, text
    assert all(f"session {names[i]}" in text_of(by_id[200 + i]) for i in range(12, 24))
    assert text_of(by_id[301]).startswith("24 session(s)") and "unreadable" not in text_of(by_id[301])
    assert_quiet(errors)


def test_writes_to_more_sessions_than_fit_are_all_answered_and_the_server_serves_on(template):
    """Notes to twenty sessions at once, with reads among them: every request is answered (the server hung
    here: the write controllers' threads could not make their event loops), then every note is found."""
    names = many_sessions(template, 30)
    notes = [
        tool_call(100 + i, "remember", session=name, text=f"note zork{i:03d}") for i, name in enumerate(names[:20])
    ]
    reads = [tool_call(200 + i, "read", session=name, id="ambient") for i, name in enumerate(names[20:])]
    server = LimitedServer(LIMIT, "--allow-writes")
    by_id = server.ask([*notes, *reads, tool_call(300, "search", query="vault")])
    noted = [i for i in range(20) if not answered(by_id[100 + i])[0]]
    for request in [*notes, *reads]:
        failed, text = answered(by_id[request["id"]])
        assert not failed or "nothing was written" in text, text
    assert noted, [text_of(by_id[100 + i]) for i in range(20)]
    after = server.ask([tool_call(400 + i, "search", query=f"zork{i:03d}", session=names[i]) for i in noted])
    for i in noted:
        assert f"zork{i:03d}" in text_of(after[400 + i]), text_of(after[400 + i])
    assert_quiet(server.close())


def test_out_of_descriptors_is_one_line_and_the_next_request_is_served(template):
    """Under a limit that leaves room for a session reader but not for a write's controller, the write is
    refused in one line saying what to do, what it opened is closed, and reads go on being answered."""
    names = many_sessions(template, 3)
    if not Path(f"/proc/{os.getpid()}/fd").is_dir():
        pytest.skip("needs /proc to count the server's descriptors")
    probe = LimitedServer(None, "--allow-writes")
    base = probe.pid_descriptors()  # what the server holds once started, before any tool
    probe.close()
    server = LimitedServer(base + 6, "--allow-writes")
    first = server.ask([tool_call(2, "remember", session=names[0], text="note zork")])
    failed, text = answered(first[2])
    assert failed and text.endswith(
        f"too many open files: raise `ulimit -n` (now {base + 6}) or call remember again in a moment; "
        "nothing was written"
    ), text
    for round_ in range(2):  # (the write's descriptors were given back: the reads fit, again and again)
        for asked in (
            tool_call(10, "search", query="quux001", session=names[1]),
            tool_call(11, "read", session=names[2], id="ambient"),
            tool_call(12, "status", session=names[0]),
        ):
            failed, text = answered(server.ask([asked])[asked["id"]])
            assert not failed, (round_, text)
            assert asked["id"] != 10 or "quux001" in text
    again = server.ask([tool_call(20, "remember", session=names[0], text="note zork")])
    assert answered(again[20])[0] and "too many open files" in text_of(again[20])
    assert_quiet(server.close())


def test_an_error_listing_the_sessions_is_an_error_not_none(template, monkeypatch):
    from ccm_tui.memory_server.reads import Reads
    from ccm_tui.memory_server.scope import Scope, ToolInputError

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
        with pytest.raises(ToolInputError) as said:
            ask()
        message = str(said.value)
        assert "cannot list the sessions in the sessions directory: too many open files" in message
        assert "no sessions yet" not in message and str(sessions_root()) not in message
    reads.close()


def test_the_readers_kept_open_are_a_share_of_the_limit():
    from ccm_tui.memory_server.reads import readers_kept
    from ccm_tui.memory_server.writes import writers_kept

    assert readers_kept(256) == 16 and readers_kept(64) == 4 and readers_kept(20) == 2
    assert readers_kept(1 << 20) == 64
    assert writers_kept(256) == 6 and writers_kept(64) == 1 and writers_kept(1 << 20) == 16
