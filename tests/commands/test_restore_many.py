"""``ccm-tui restore DIR|GLOB...``: many transcripts, one effort each, a table, idempotent re-runs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.helpers.restore_runs import MODEL, responder, run, write_claude_session
from tests.helpers.transcripts import FIXTURES


@pytest.fixture
def projects(tmp_path: Path, llm_server, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A ``~/.claude/projects``-like tree: two sessions, an empty one, a file that is no transcript,
    a broken transcript (an opencode session whose id is a path), a hidden directory."""
    root = tmp_path / "projects"
    (root / "app").mkdir(parents=True)
    write_claude_session(root / "app" / "one.jsonl", tmp_path / "calc")
    shutil.copy(FIXTURES / "aider.chat.history.md", root / "app" / "history.md")
    (root / "app" / "empty.jsonl").write_text('{"parentUuid": null, "sessionId": "x"}\n', encoding="utf-8")
    (root / "app" / "notes.txt").write_text("not a transcript\n", encoding="utf-8")
    (root / "app" / "ses_bad.json").write_text(json.dumps({"id": "../../etc", "directory": "/w"}), encoding="utf-8")
    (root / ".cache").mkdir()
    shutil.copy(FIXTURES / "claude-code-session.jsonl", root / ".cache" / "hidden.jsonl")
    llm_server.responder = responder
    monkeypatch.setenv("CCM_RETRY_BASE_SECONDS", "0")
    monkeypatch.setenv("HOME", str(tmp_path))
    return root


def bulk(capsys, llm_server, session: Path, *args: str) -> tuple[int, str, str]:
    return run(
        capsys, "restore", *args, "--session-dir", str(session), "--model", MODEL, "--api-base", llm_server.base_url
    )


def test_a_directory_imports_each_session_and_ends_with_a_table(capsys, llm_server, projects, tmp_path) -> None:
    session = tmp_path / "ccm"
    rc, out, err = bulk(capsys, llm_server, session, str(projects), "--skip-evidence-search")

    assert rc == 1  # one file failed; the others were imported anyway
    lines = out.splitlines()
    assert lines[0].split() == ["file", "format", "turns", "effort", "id", "status"]
    rows = {Path(line.split()[0]).name: line for line in lines[1:6]}
    assert set(rows) == {"empty.jsonl", "history.md", "notes.txt", "one.jsonl", "ses_bad.json"}  # no hidden dir
    assert "skipped: no human turns" in rows["empty.jsonl"]
    assert "skipped: not a transcript" in rows["notes.txt"]  # an agent's folder holds other files too
    assert "failed: not an opencode session file: its id is not a plain name" in rows["ses_bad.json"]
    assert " imported" in rows["history.md"] and " aider " in rows["history.md"]
    assert " imported" in rows["one.jsonl"] and " claude-code " in rows["one.jsonl"]
    assert "Cost: " in out and "per turn" in out
    assert "[2/5] history.md" in err and "model call(s)" in err
    assert "2 imported, 2 skipped, 1 failed of 5 file(s)" in out
    rc, data, _ = run(capsys, "status", "--session-dir", str(session), "--json")
    assert len(json.loads(data)["efforts"]) == 2

    calls = len(llm_server.chat_requests())
    rc, out, err = bulk(
        capsys, llm_server, session, str(projects / "app" / "*.md"), str(projects / "app" / "one.jsonl")
    )
    assert rc == 0, err
    assert out.count("skipped: already imported as") == 2
    assert len(llm_server.chat_requests()) == calls


def test_parse_only_over_several_files_keeps_the_single_file_document(capsys, projects) -> None:
    rc, out, err = run(capsys, "restore", str(projects / "app"), "--parse-only", "--json")
    documents = json.loads(out)["files"]

    assert [Path(d["file"]).name for d in documents] == [
        "empty.jsonl",
        "history.md",
        "notes.txt",
        "one.jsonl",
        "ses_bad.json",
    ]
    assert "cannot detect" in documents[2]["error"]
    single_rc, single_out, _ = run(capsys, "restore", str(projects / "app" / "one.jsonl"), "--parse-only", "--json")
    single = json.loads(single_out)
    assert set(single) == {"format", "turns", "skipped", "cwd", "title"}  # unchanged single-file shape
    assert {k: v for k, v in documents[3].items() if k != "file"} == single
    assert rc == 1 and single_rc == 0  # a file that could not be parsed makes the exit status 1


def test_a_glob_matching_nothing_is_an_error(capsys, tmp_path) -> None:
    rc, _, err = run(capsys, "restore", str(tmp_path / "nothing-*.jsonl"), "--parse-only")
    assert rc == 1 and "no transcript found" in err


def test_a_refused_key_stops_a_bulk_import_at_the_first_file(capsys, llm_server, projects, tmp_path) -> None:
    """A bad key (or an unknown model) fails every file the same way: one refused request, not one per file."""
    from tests.helpers.openai_server import fault

    llm_server.responder = lambda body: fault(401)
    rc, out, err = bulk(capsys, llm_server, tmp_path / "ccm", str(projects / "app" / "*.md"), str(projects / "app"))

    assert rc == 1
    assert len(llm_server.chat_requests()) == 1
    assert "1 failed" in out and "not tried: the provider refuses this key or model" in out
    assert "0 imported" in out
