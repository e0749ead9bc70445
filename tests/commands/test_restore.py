"""``ccm-tui restore`` end to end, in-process, against the fake LLM server."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from ccm_tui.commands.restore import ProgressLine
from tests.helpers.openai_server import fault
from tests.helpers.restore_runs import (
    FINAL_SUMMARY,
    LONG_ANSWER,
    MODEL,
    responder,
    restore,
    run,
    write_claude_session,
    write_mixed_labels,
)
from tests.helpers.transcripts import FIXTURES


@pytest.fixture
def workspace(tmp_path: Path, llm_server, monkeypatch: pytest.MonkeyPatch):
    project = tmp_path / "calc"
    (project / "src").mkdir(parents=True)
    (project / "src" / "calc.py").write_text("def divide(a, b):\n    if b == 0:\n        raise ValueError\n")
    transcript = write_claude_session(tmp_path / "session.jsonl", project)
    llm_server.responder = responder
    monkeypatch.setenv("CCM_RETRY_BASE_SECONDS", "0")
    monkeypatch.setenv("HOME", str(tmp_path))  # the recorded project is inside the user's home
    return transcript, tmp_path / "ccm-session"


def test_restore_lands_a_concluded_effort_that_status_lists(capsys, llm_server, workspace) -> None:
    transcript, session = workspace
    rc, out, err = restore(capsys, llm_server, transcript, session)
    assert rc == 0, err
    assert "concluded effort 'fix-calculator-division-by-zero'" in out
    assert "3 turn(s)" in out and f"Summary: {FINAL_SUMMARY}" in out
    assert "ccm-tui status --session-dir" in out and "expand" in out

    rc, out, err = run(capsys, "status", "--session-dir", str(session), "--json")
    assert rc == 0, err
    (effort,) = json.loads(out)["efforts"]
    assert effort["id"] == "fix-calculator-division-by-zero"
    assert effort["status"] == "concluded" and effort["active"] is False
    assert effort["summary"] == FINAL_SUMMARY and effort["in_memory"] is True
    source = effort["source"]
    assert source["file"] == str(transcript.resolve())
    assert source["format"] == "claude-code" and source["turns"] == 3 and source["artifacts"] == 3
    assert source["restored_at"] and source["evidence"]["ended_by"] == "complete"
    assert source["report"].startswith("SESSION SUMMARY")

    log = [json.loads(line) for line in (session / "efforts" / f"{effort['id']}.jsonl").read_text().splitlines()]
    assert [m["role"] for m in log] == ["user", "assistant"] * 3
    assert log[0]["content"] == "The divide function crashes when b is zero, fix it"
    assert LONG_ANSWER.strip() in log[1]["content"]  # raw logs are complete, never cut
    assert all(m["ts"] for m in log)

    rc, out, _ = run(capsys, "search", "--session-dir", str(session), "--json", "ValueError pytest")
    assert json.loads(out)["results"][0]["id"] == effort["id"]
    events = [json.loads(line)["event"] for line in (session / "events.jsonl").read_text().splitlines()]
    assert "effort_restored" in events and events[-1] == "session_end"


def test_evidence_runs_under_the_recorded_cwd_and_refuses_escapes(capsys, llm_server, workspace) -> None:
    transcript, session = workspace
    rc, _, err = restore(capsys, llm_server, transcript, session)
    assert rc == 0, err
    evidence = [b for b in llm_server.chat_requests() if b.get("tools")]
    assert len(evidence) == 2
    answers = [json.loads(m["content"]) for m in evidence[1]["messages"] if m["role"] == "tool"]
    assert answers[0]["matches"]  # search_log over the transcript
    assert answers[1]["path"] == "src/calc.py" and "raise ValueError" in answers[1]["content"]
    assert "refused" in answers[2]["error"]
    final = next(b for b in llm_server.chat_requests() if "SESSION SUMMARY" in b["messages"][0]["content"])
    assert "- calc.py guards b == 0 (verified)" in final["messages"][-1]["content"]
    assert "evidence search: files under" in err


def test_flags_skip_evidence_dump_turns_and_max_turns(capsys, llm_server, workspace) -> None:
    transcript, session = workspace
    rc, out, err = restore(
        capsys, llm_server, transcript, session, "--skip-evidence-search", "--dump-turns", "--max-turns", "2"
    )
    assert rc == 0, err
    assert not any(b.get("tools") for b in llm_server.chat_requests())
    assert out.count("TURN SUMMARY") == 2 and "Key outcomes: outcome 2" in out
    manifest = yaml.safe_load((session / "manifest.yaml").read_text())
    assert manifest["efforts"][0]["source"]["turns"] == 2 and manifest["efforts"][0]["messages"] == 4


def test_max_searches_forces_completion_end_to_end(capsys, llm_server, workspace) -> None:
    transcript, session = workspace
    rc, out, err = restore(capsys, llm_server, transcript, session, "--max-searches", "1", "--json")
    assert rc == 0, err
    evidence = [b for b in llm_server.chat_requests() if b.get("tools")]
    assert len(evidence) == 2
    assert [t["function"]["name"] for t in evidence[-1]["tools"]] == ["complete"]
    assert json.loads(out)["source"]["evidence"] == {"rounds": 1, "ended_by": "max_searches", "tool_calls": 3}


def test_json_output_and_second_restore_gets_a_new_id(capsys, llm_server, workspace) -> None:
    transcript, session = workspace
    assert restore(capsys, llm_server, transcript, session, "--skip-evidence-search")[0] == 0
    # importing the same transcript again is refused unless --force asks for a copy
    rc, out, err = restore(
        capsys, llm_server, transcript, session, "--skip-evidence-search", "--json", "--dump-turns", "--force"
    )
    assert rc == 0, err
    data = json.loads(out)
    assert data["effort_id"] == "fix-calculator-division-by-zero-2"
    assert data["turns"] == 3 and data["summary"] == FINAL_SUMMARY
    assert [t["turn"] for t in data["turn_summaries"]] == [1, 2, 3]
    assert "report" not in data["source"] and data["source"]["format"] == "claude-code"


def test_restore_prints_each_parse_warning_on_stderr_naming_the_file(capsys, llm_server, workspace) -> None:
    _, session = workspace
    transcript = write_mixed_labels(session.parent / "mixed.md")
    rc, out, err = restore(capsys, llm_server, transcript, session, "--skip-evidence-search")
    assert rc == 0, err
    (warning,) = [line for line in err.splitlines() if "warning:" in line]
    assert warning.startswith("restore: warning: mixed.md: 1 turn found but the file has 13 user messages")
    assert "warning" not in out


def test_failed_turn_is_noted_and_the_rest_lands(capsys, llm_server, workspace) -> None:
    transcript, session = workspace

    def flaky(body: dict[str, Any]):
        if "TURN SUMMARY" in body["messages"][0]["content"] and "this is turn 2 of" in body["messages"][-1]["content"]:
            return fault(400)
        return responder(body)

    llm_server.responder = flaky
    rc, out, err = restore(capsys, llm_server, transcript, session, "--skip-evidence-search")
    assert rc == 0, err
    assert "note: turn 2 skipped" in err and "(1 could not be summarized)" in out
    manifest = yaml.safe_load((session / "manifest.yaml").read_text())
    assert manifest["efforts"][0]["source"]["skipped_turns"] == [2]


def test_final_summary_failure_falls_back_to_the_state(capsys, llm_server, workspace) -> None:
    transcript, session = workspace

    def no_final(body: dict[str, Any]):
        return fault(400) if "SESSION SUMMARY" in body["messages"][0]["content"] else responder(body)

    llm_server.responder = no_final
    rc, out, err = restore(capsys, llm_server, transcript, session, "--skip-evidence-search")
    assert rc == 0, err
    assert "session summary failed" in err
    effort = yaml.safe_load((session / "manifest.yaml").read_text())["efforts"][0]
    assert effort["source"]["summary_offline"] is True and "request 1" in effort["summary"]


def test_bad_key_stops_before_anything_lands(capsys, llm_server, workspace) -> None:
    transcript, session = workspace
    llm_server.responder = lambda body: fault(401)
    rc, _, err = restore(capsys, llm_server, transcript, session)
    assert rc == 1 and "nothing was imported" in err and "Traceback" not in err
    assert not (session / "manifest.yaml").exists()


def test_parse_only_json_prints_the_contract(capsys) -> None:
    rc, out, err = run(capsys, "restore", str(FIXTURES / "claude-code-session.jsonl"), "--parse-only", "--json")
    assert rc == 0, err
    data = json.loads(out)
    assert {"format", "turns"} <= set(data)
    assert data["format"] == "claude-code" and data["turns"]
    for turn in data["turns"]:
        assert set(turn) == {"turn", "user", "artifacts"}
        assert isinstance(turn["turn"], int) and isinstance(turn["user"], str)
        for artifact in turn["artifacts"]:
            assert set(artifact) == {"path", "action"} and artifact["action"] in ("read", "edited", "created")


def test_parse_only_table_needs_no_model(capsys, tmp_path: Path) -> None:
    transcript = write_claude_session(tmp_path / "s.jsonl", tmp_path)
    rc, out, err = run(capsys, "restore", str(transcript), "--parse-only")
    assert rc == 0, err
    assert out.startswith("format claude-code · 3 turn(s) · 3 artifact(s)")
    assert "Add a pytest test for it" in out and "created tests" not in out  # paths are shown as recorded
    assert f"created {tmp_path}/tests/test_calc.py" in " ".join(out.split())


def test_parse_only_prints_each_parse_warning_on_stderr_naming_the_file(capsys, tmp_path: Path) -> None:
    transcript = write_mixed_labels(tmp_path / "mixed.md")
    for extra in ([], ["--json"]):
        rc, out, err = run(capsys, "restore", str(transcript), "--parse-only", *extra)
        assert rc == 0, err
        (warning,) = err.splitlines()
        assert warning.startswith("restore: warning: mixed.md: 1 turn found but the file has 13 user messages")
    rc, out, err = run(capsys, "restore", str(transcript), str(FIXTURES / "codex-rollout.jsonl"), "--parse-only")
    assert rc == 0 and err.count("restore: warning: mixed.md: ") == 1 and "codex-rollout" not in err


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--parse-only", "--dump-turns"], "--dump-turns"),
        (["--format", "nonsense"], "unknown --format"),
    ],
)
def test_bad_flags_are_usage_errors(capsys, tmp_path: Path, extra: list[str], message: str) -> None:
    """(Numbers out of range are refused by argparse: tests/commands/test_numeric_options.py.)"""
    transcript = write_claude_session(tmp_path / "s.jsonl", tmp_path)
    rc, _, err = run(capsys, "restore", str(transcript), *extra)
    assert rc == 2 and message in err


def test_runtime_errors_are_one_line(capsys, tmp_path: Path) -> None:
    rc, _, err = run(capsys, "restore", str(tmp_path / "missing.jsonl"), "--parse-only")
    assert rc == 1 and "no transcript file" in err
    transcript = write_claude_session(tmp_path / "s.jsonl", tmp_path)
    rc, _, err = run(capsys, "restore", str(transcript), "--session-dir", str(tmp_path / "s"))
    assert rc == 1 and "no model configured" in err and len(err.strip().splitlines()) == 1
    rc, _, err = run(
        capsys,
        "restore",
        str(transcript),
        "--session-dir",
        str(tmp_path / "s"),
        "--model",
        MODEL,
        "--root",
        str(tmp_path / "nowhere"),
    )
    assert rc == 1 and "not a directory" in err
    empty = tmp_path / "empty.jsonl"
    empty.write_text(json.dumps({"type": "summary", "summary": "x", "leafUuid": "q"}) + "\n")
    rc, _, err = run(
        capsys, "restore", str(empty), "--format", "claude-code", "--model", MODEL, "--session-dir", str(tmp_path / "s")
    )
    assert rc == 1 and "no human turns" in err


def test_progress_line_tty_and_plain() -> None:
    plain = io.StringIO()
    progress = ProgressLine(plain, tty=False)
    progress(0, 3, "summarizing turn 1")
    progress(0, 3, "summarizing turn 1")
    progress(1, 3, "summarizing turn 2")
    assert plain.getvalue().splitlines() == ["restore: summarizing turn 1 (0/3)", "restore: summarizing turn 2 (1/3)"]
    tty = io.StringIO()
    progress = ProgressLine(tty, tty=True)
    progress(1, 2, "summarizing turn 2")
    progress.clear()
    assert "\r\x1b[K" in tty.getvalue() and "1/2 summarizing turn 2" in tty.getvalue() and "\n" not in tty.getvalue()
