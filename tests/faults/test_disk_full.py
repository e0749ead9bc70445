"""A full disk: one plain message, and a failure reported only when the exchange was not stored
(issue 25, item 6). Needs a small tmpfs (root, or skipped)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.helpers.cli_session import CCM
from tests.helpers.openai_server import text


@pytest.fixture
def small_disk(tmp_path):
    disk = tmp_path / "disk"
    disk.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(disk)], capture_output=True)
    if done.returncode != 0:
        pytest.skip("cannot mount a small tmpfs here (needs root)")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def fill(disk: Path, leave: int = 0) -> Path:
    """Fill the disk, leaving about ``leave`` bytes free."""
    filler = disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        for size in (1 << 20, 4096, 1):
            try:
                while True:
                    os.write(fd, b"\0" * size)
            except OSError:
                pass
    finally:
        os.close(fd)
    if leave:
        os.truncate(filler, max(0, filler.stat().st_size - leave))
    return filler


def test_a_send_on_a_full_disk_says_so_plainly_and_nothing_is_duplicated(llm_server, small_disk, capsys):
    ccm = CCM(llm_server, small_disk / "session", capsys)
    ccm.server.push(text("First answer."))
    ccm.send("first message")
    filler = fill(small_disk)
    ccm.server.push(text("Second answer."))
    rc, out, err = ccm.run(*ccm.send_argv("second message"))
    assert rc == 1
    assert err.startswith("ccm-tui: the disk is full") and err.count("\n") == 1, err
    filler.unlink()
    ccm.server.push(text("Third answer."))
    rc, out, err = ccm.run(*ccm.send_argv("third message"))
    assert rc == 0, err


@pytest.mark.parametrize("leave_kib", range(0, 96, 8))
def test_a_send_fails_only_when_its_exchange_was_not_stored(llm_server, small_disk, capsys, leave_kib):
    ccm = CCM(llm_server, small_disk / "session", capsys)
    ccm.server.push(text("First answer."))
    ccm.send("first message")
    filler = fill(small_disk, leave=leave_kib * 1024)
    ccm.server.push(text("Second answer: " + " ".join(f"word{i}" for i in range(400))))
    rc, out, err = ccm.run(*ccm.send_argv("second message"))
    filler.unlink()
    stored = "second message" in (ccm.dir / "raw.jsonl").read_text()
    assert (rc == 0) == stored, (rc, err)
    if rc != 0:
        assert err.startswith("ccm-tui: the disk is full") and err.count("\n") == 1, err
    ccm.server.push(text("Third answer."))
    rc, out, err = ccm.run(*ccm.send_argv("third message"))
    assert rc == 0, err
    users = [r["content"] for r in ccm.lines("raw.jsonl") if r.get("role") == "user"]
    assert users.count("second message") <= 1 and users.count("third message") == 1


@pytest.mark.parametrize("leave_kib", range(64, 208, 16))
def test_following_what_a_failed_send_says_never_stores_it_twice(llm_server, small_disk, capsys, leave_kib):
    """Found by the disk-full campaign: a send whose open_effort ran before the disk filled said 'your
    message is kept' while the next start logged its turn, so the resend stored it twice. Now it is
    given back only when nothing of it is stored; otherwise it says not to send it again."""
    from tests.helpers.openai_server import call, tool_calls

    ccm = CCM(llm_server, small_disk / "session", capsys)
    ccm.server.push(text("First answer."))
    ccm.send("first message")
    filler = fill(small_disk, leave=leave_kib * 1024)
    ccm.server.push(tool_calls(call("open_effort", {"name": "Pantry"})))
    ccm.server.push(text("Opened: " + " ".join(f"word{i}" for i in range(3000))))
    rc, out, err = ccm.run(*ccm.send_argv("plan the pantry shelves"))
    filler.unlink()
    if rc != 0:
        assert err.startswith("ccm-tui: the disk is full") and err.count("\n") == 1, err
        if "do not send it again" in err:
            assert "retry-orphan" not in err
            ccm.server.push(text("Noted."))
            ccm.send("something else")  # the next start logs the turn
        else:
            ccm.server.push(text("Opened again."))
            ccm.send("plan the pantry shelves")
    logged = [
        r["content"] for p in ("raw.jsonl", "efforts/pantry.jsonl") for r in ccm.lines(p) if r.get("role") == "user"
    ]
    assert logged.count("plan the pantry shelves") == 1, (rc, err, logged)
