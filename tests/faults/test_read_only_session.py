"""Reading a session needs no write: ``search`` answers in a directory the user cannot write
(issue 25, item 12)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.helpers.cli_session import CCM
from tests.helpers.openai_server import call, text, tool_calls

NOBODY = 65534


def as_nobody(*argv: str, home: Path) -> subprocess.CompletedProcess[str]:
    """The CLI run by a user who may read the session but not write to it (root ignores modes)."""
    env = {**os.environ, "PYTHONPATH": os.getcwd(), "HOME": str(home), "CCM_HOME": str(home / "ccm")}
    env.pop("XDG_DATA_HOME", None)
    env.pop("XDG_CONFIG_HOME", None)
    prefix = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"] if os.geteuid() == 0 else []
    command = [*prefix, sys.executable, "-m", "ccm_tui.cli", *argv]
    return subprocess.run(command, capture_output=True, text=True, timeout=60, env=env)


@pytest.mark.skipif(os.geteuid() == 0 and shutil.which("setpriv") is None, reason="needs setpriv as root")
def test_search_answers_in_a_session_the_user_cannot_write(llm_server, capsys):
    top = Path(tempfile.mkdtemp(prefix="ccm-ro-"))
    try:
        ccm = CCM(llm_server, top / "session", capsys)
        ccm.server.push(tool_calls(call("open_effort", {"name": "kyoto trip"})), text("Temples and gardens."))
        ccm.send("plan the kyoto trip")
        (top / "home").mkdir()
        for path in [top, *top.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        if os.geteuid() != 0:
            (top / "session").chmod(0o555)
        before = sorted(p.name for p in (top / "session").iterdir())
        done = as_nobody("search", "--session-dir", str(top / "session"), "kyoto", home=top / "home")
        assert done.returncode == 0, done.stderr
        assert "kyoto-trip" in done.stdout
        assert sorted(p.name for p in (top / "session").iterdir()) == before
    finally:
        (top / "session").chmod(0o755)
        shutil.rmtree(top)


def test_restore_into_a_session_locked_elsewhere_fails_before_any_model_call(ccm, monkeypatch, tmp_path):
    from ccm_tui.core.session.lock import SessionLock
    from ccm_tui.restore import landing

    ccm.server.push(text("Hello."))
    ccm.send("hi")
    transcript = tmp_path / "chat.md"
    transcript.write_text("## User\n\nplan the kyoto trip\n\n## Assistant\n\nTemples and gardens.\n")
    monkeypatch.setattr(landing, "LOCK_PROBE_WAIT", 0.1)
    holder = SessionLock(ccm.dir)
    assert holder.try_acquire()  # another writer (its own open file: flock conflicts in-process too)
    try:
        requests = len(ccm.server.chat_requests())
        rc, out, err = ccm.run(
            "restore",
            "--session-dir",
            str(ccm.dir),
            "--model",
            ccm.model,
            "--api-base",
            ccm.server.base_url,
            str(transcript),
        )
    finally:
        holder.release()
    assert rc == 1 and "in use" in err, err
    assert len(ccm.server.chat_requests()) == requests  # no model call was spent


def test_forced_repairs_keep_only_the_last_three_copies(ccm):
    from ccm_tui.core.engine.repair import KEEP_BEFORE_REPAIR

    ccm.server.push(text("Hello."))
    ccm.send("hi")
    for _ in range(6):
        rc, out, err = ccm.run("repair", "--session-dir", str(ccm.dir), "--force")
        assert rc == 0, err
    copies = sorted(p.name for p in ccm.dir.glob("manifest.yaml.before-repair-*"))
    assert len(copies) == KEEP_BEFORE_REPAIR == 3


def test_a_transcript_over_the_size_limit_is_refused_with_the_limit(ccm, monkeypatch, tmp_path):
    from ccm_tui.restore import parse

    monkeypatch.setattr(parse, "MAX_TRANSCRIPT_BYTES", 4 * 2**20)
    transcript = tmp_path / "huge.md"
    transcript.write_text("## User\n\nhello\n\n## Assistant\n\n" + "words " * 1_000_000)
    rc, out, err = ccm.run("restore", "--session-dir", str(ccm.dir), "--parse-only", str(transcript))
    assert rc == 1
    assert "huge.md is 6 MiB, over the 4 MiB a transcript may have" in err and err.count("\n") == 1
