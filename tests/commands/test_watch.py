"""``ccm-tui watch``: the agents' stores under the home directory and ``--root`` captured without a
model, searchable with ``search --all-sessions`` (and MCP) with agent, project, date and resume; files
readable by the user only; following the files as an agent writes them, ended cleanly by SIGTERM."""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.mcp_session import mcp_server
from tests.helpers.restore_runs import run
from tests.helpers.transcripts import FIXTURES
from tests.restore.test_capture import UUID, turn_records, write_turns

ROOT = Path(__file__).resolve().parents[2]
CODEX_ID = "5a6b7c8d-1111-4222-8333-944455556666"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home with a Claude Code session (project calc) and a Codex session."""
    home = tmp_path / "home"
    claude = home / ".claude" / "projects" / "-home-me-calc"
    claude.mkdir(parents=True)
    write_turns(claude / f"{UUID}.jsonl", [1, 2])
    codex = home / ".codex" / "sessions" / "2025" / "11" / "22"
    codex.mkdir(parents=True)
    shutil.copy(FIXTURES / "codex-rollout.jsonl", codex / f"rollout-2025-11-22T10-00-00-{CODEX_ID}.jsonl")
    monkeypatch.setenv("HOME", str(home))
    return home


def search_all(capsys, *args: str) -> list[dict]:
    rc, out, err = run(capsys, "search", "--all-sessions", "--json", *args)
    assert rc == 0, err
    results: list[dict] = json.loads(out)["results"]
    return results


def test_watch_once_captures_every_agent_store_and_search_all_sessions_says_how_to_resume(capsys, home) -> None:
    rc, out, err = run(capsys, "watch", "--once")
    assert rc == 0, err
    assert "backfill: 2 file(s)" in out and "(2 new)" in out

    [hit] = search_all(capsys, "quokka2")
    assert hit["session"] == "capture-claude-code"
    assert {k: hit[k] for k in ("agent", "project", "resume")} == {
        "agent": "claude-code", "project": "calc", "resume": f"claude --resume {UUID}"
    }  # fmt: skip
    assert len(hit["started"]) == 10 and {"id", "status", "summary", "score", "snippet"} <= set(hit)
    codex = search_all(capsys, "--agent", "codex", "the")
    assert codex and all(h["agent"] == "codex" and h["resume"] == f"codex resume {CODEX_ID}" for h in codex)
    assert search_all(capsys, "--agent", "codex", "quokka2") == []
    assert search_all(capsys, "--project", "calc", "--since", "2999-01-01", "quokka1") == []


def test_captured_files_are_readable_by_the_user_only(capsys, home) -> None:
    assert run(capsys, "watch", "--once")[0] == 0
    data = Path(os.environ["CCM_HOME"]) / "sessions"
    made = [data, *data.rglob("*")]
    assert made and all(stat.S_IMODE(p.stat().st_mode) & 0o077 == 0 for p in made if not p.is_symlink())


def test_a_second_run_captures_nothing_again_and_a_grown_file_only_its_new_turn(capsys, home) -> None:
    assert run(capsys, "watch", "--once")[0] == 0
    again = run(capsys, "watch", "--once")[1]
    assert "0 turn(s) captured" in again and "2 unchanged" in again
    write_turns(next(home.glob(".claude/projects/*/*.jsonl")), [1, 2, 3])

    grown = run(capsys, "watch", "--once")[1]
    assert "1 turn(s) captured" in grown
    [hit] = search_all(capsys, "quokka3")
    assert hit["id"] == search_all(capsys, "quokka1")[0]["id"]  # the same effort grew


def test_a_root_with_no_transcripts_and_a_deleted_source_are_said_in_one_line(capsys, home, tmp_path) -> None:
    root = tmp_path / "exports"
    root.mkdir()
    (root / "notes.md").write_text("# shopping\n- eggs\n", encoding="utf-8")
    (root / "loop").symlink_to(root)  # a symlink loop: never entered
    rc, out, _ = run(capsys, "watch", "--once", "--no-home", "--root", str(root))
    assert rc == 0
    assert f"{root / 'notes.md'}: not a transcript" in out.splitlines()

    assert run(capsys, "watch", "--once")[0] == 0
    next(home.glob(".claude/projects/*/*.jsonl")).unlink()
    [hit] = search_all(capsys, "quokka2")
    assert hit["source_gone"] is True


def test_search_filters_without_all_sessions_are_a_usage_error(capsys) -> None:
    rc, _, err = run(capsys, "search", "--agent", "codex", "x")
    assert rc == 2 and "go with --all-sessions" in err


async def test_mcp_all_sessions_search_gives_the_same_capture_fields(capsys, home) -> None:
    assert run(capsys, "watch", "--once")[0] == 0
    async with mcp_server("--all-sessions") as client:
        found = await client.call("search", query="quokka2")
    assert "session capture-claude-code" in found.text
    assert "agent: claude-code · project: calc · started: " in found.text
    assert f"resume: claude --resume {UUID}" in found.text


def test_watch_follows_a_file_as_the_agent_writes_it_and_sigterm_ends_it_cleanly(home, tmp_path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HOME": str(home)}
    agent_file = next(home.glob(".claude/projects/*/*.jsonl"))
    watcher = subprocess.Popen(
        [sys.executable, "-m", "ccm_tui.cli", "watch"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert watcher.stdout is not None
        for line in watcher.stdout:  # the backfill ends, then the watcher says it follows
            if line.startswith("following"):
                break
        with agent_file.open("a", encoding="utf-8") as handle:
            handle.write("".join(json.dumps(r) + "\n" for r in turn_records(3)))
        deadline = time.monotonic() + 30
        found = []
        while time.monotonic() < deadline and not found:
            done = subprocess.run(
                [sys.executable, "-m", "ccm_tui.cli", "search", "--all-sessions", "--json", "quokka3"],
                cwd=ROOT, env=env, capture_output=True, text=True, timeout=60,
            )  # fmt: skip
            found = [r for r in json.loads(done.stdout)["results"] if "quokka3" in (r.get("passage") or "")]
        assert found, "the appended turn was never found"
    finally:
        watcher.send_signal(signal.SIGTERM)
        out, err = watcher.communicate(timeout=30)
    assert watcher.returncode == 0, err
    assert "Traceback" not in err and "stopped:" in out


def test_search_all_sessions_never_imports_litellm(capsys, home) -> None:
    assert run(capsys, "watch", "--once")[0] == 0
    code = (
        "import sys; from ccm_tui.cli import main; rc = main(['search', '--all-sessions', '--json', 'quokka2']); "
        "bad = [m for m in ('litellm', 'openai', 'textual') if m in sys.modules]; "
        "sys.stderr.write(repr(bad)); sys.exit(rc or (1 if bad else 0))"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CCM_MODEL": "openai/gpt-4o"}
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["results"][0]["agent"] == "claude-code"
