"""Capture without a model (``ccm_tui.restore.capture``): the turns ``restore --parse-only`` finds,
each logged once however the file changes (grows, is torn mid-line, rewritten, captured again after
a kill), redacted, skipped when forgotten or excluded."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from ccm_tui.config import Settings
from ccm_tui.core.storage.durable import read_jsonl
from ccm_tui.restore.capture import (
    FORGOTTEN_FILE,
    CaptureOptions,
    CaptureOutcome,
    Capturer,
    new_records,
)
from ccm_tui.restore.parse import parse_transcript
from tests.helpers.restore_runs import claude_record
from tests.helpers.transcripts import FIXTURES

UUID = "0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0"
SAMPLE = [
    "claude-code-session.jsonl",
    "aider.chat.history.md",
    "cline-api-conversation-history.json",
    "claude-code-thinking-task.jsonl",
    "bob-task-history.md",
]


def request(n: int) -> str:
    return f"request number {n} about the quokka{n} parser"


def turn_records(n: int, cwd: str = "/home/me/calc") -> list[dict[str, Any]]:
    """Turn ``n`` of a Claude Code session: the request and its answer."""
    parent = f"a{n - 1}" if n > 1 else None
    return [
        claude_record(f"u{n}", parent, "user", request(n), cwd),
        claude_record(
            f"a{n}", f"u{n}", "assistant", [{"type": "text", "text": f"answer {n}"}], cwd, message={"id": f"m{n}"}
        ),  # fmt: skip
    ]


def write_turns(path: Path, numbers: list[int], tail: str = "") -> Path:
    lines = [json.dumps(r) for n in numbers for r in turn_records(n)]
    path.write_text("\n".join(lines) + "\n" + tail, encoding="utf-8")
    return path


def capturer(root: Path, **options: Any) -> Capturer:
    made = Capturer(root / "sessions", Settings(), CaptureOptions(**options))
    made.load()
    return made


def logged_turns(root: Path, agent: str = "claude-code") -> dict[str, list[str]]:
    """Each captured effort's logged requests, by effort id."""
    efforts = root / "sessions" / f"capture-{agent}" / "efforts"
    found: dict[str, list[str]] = {}
    for log in sorted(efforts.glob("*.jsonl")):
        records = read_jsonl(log).records
        found[log.stem] = [r["content"] for r in records if r.get("role") == "user"]
    return found


@pytest.fixture
def agent_file(tmp_path: Path) -> Path:
    folder = tmp_path / "home" / ".claude" / "projects" / "-home-me-calc"
    folder.mkdir(parents=True)
    return folder / f"{UUID}.jsonl"


def test_each_file_gets_the_turns_restore_parse_only_finds_and_a_second_capture_is_a_no_op(tmp_path: Path) -> None:
    files = [FIXTURES / name for name in SAMPLE]
    first = capturer(tmp_path).capture(files)

    assert [r.outcome for r in first] == [CaptureOutcome.NEW] * len(files)
    assert {r.path: r.turns for r in first} == {f: len(parse_transcript(f).turns) for f in files}
    again = capturer(tmp_path).capture(files)  # a new process: what is captured is read from the sessions
    assert [r.outcome for r in again] == [CaptureOutcome.UNCHANGED] * len(files)
    assert sum(r.turns for r in again) == 0


def test_a_file_that_grows_adds_only_its_new_turns(tmp_path: Path, agent_file: Path) -> None:
    cap = capturer(tmp_path)
    write_turns(agent_file, [1])
    assert [(r.outcome, r.turns) for r in cap.capture([agent_file])] == [(CaptureOutcome.NEW, 1)]
    write_turns(agent_file, [1, 2, 3])
    assert [(r.outcome, r.turns) for r in cap.capture([agent_file])] == [(CaptureOutcome.GREW, 2)]

    [requests] = logged_turns(tmp_path).values()
    assert requests == [request(n) for n in (1, 2, 3)]


def test_a_half_written_last_line_is_captured_once_it_is_whole(tmp_path: Path, agent_file: Path) -> None:
    cap = capturer(tmp_path)
    whole = json.dumps(turn_records(2)[0])
    write_turns(agent_file, [1], tail=whole[: len(whole) // 2])  # the agent is mid-write
    cap.capture([agent_file])
    write_turns(agent_file, [1, 2])
    cap.capture([agent_file])

    [requests] = logged_turns(tmp_path).values()
    assert requests == [request(1), request(2)]


def test_a_rewritten_file_neither_loses_nor_duplicates_a_turn(tmp_path: Path, agent_file: Path) -> None:
    cap = capturer(tmp_path)
    write_turns(agent_file, [1, 2, 3])
    cap.capture([agent_file])
    write_turns(agent_file, [2, 3, 4])  # compacted: the first turn left the file, a new one came

    [result] = cap.capture([agent_file])
    assert (result.outcome, result.turns) == (CaptureOutcome.REWRITTEN, 1)
    [requests] = logged_turns(tmp_path).values()
    assert requests == [request(n) for n in (1, 2, 3, 4)]


def test_a_kill_between_the_log_append_and_the_entry_save_logs_no_turn_twice(
    tmp_path: Path, agent_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_turns(agent_file, [1])
    capturer(tmp_path).capture([agent_file])
    write_turns(agent_file, [1, 2])
    from ccm_tui.core.session.session import Session

    appended = Session.append_effort

    def append_then_die(self: Session, effort: Any, messages: list[dict[str, Any]]) -> None:
        appended(self, effort, messages)
        raise KeyboardInterrupt  # the process dies right after the append was fsynced, before the entry's save

    monkeypatch.setattr(Session, "append_effort", append_then_die)
    with pytest.raises(KeyboardInterrupt):
        capturer(tmp_path).capture([agent_file])
    assert len(next(iter(logged_turns(tmp_path).values()))) == 2  # the turn is logged, its entry not saved
    monkeypatch.undo()

    [result] = capturer(tmp_path).capture([agent_file])  # the restart: the entry still says 1 turn
    assert result.turns == 0
    [requests] = logged_turns(tmp_path).values()
    assert requests == [request(1), request(2)]


def test_a_forgotten_capture_is_skipped_unless_recaptured(tmp_path: Path, agent_file: Path) -> None:
    write_turns(agent_file, [1])
    session = tmp_path / "sessions" / "capture-claude-code"
    session.mkdir(parents=True)
    (session / FORGOTTEN_FILE).write_text(f"claude-code:{UUID}\n", encoding="utf-8")

    [skipped] = capturer(tmp_path).capture([agent_file])
    assert skipped.outcome is CaptureOutcome.FORGOTTEN
    [taken] = capturer(tmp_path, recapture=True).capture([agent_file])
    assert taken.outcome is CaptureOutcome.NEW


def test_secrets_are_redacted_unless_the_setting_turns_it_off(tmp_path: Path, agent_file: Path) -> None:
    key = "sk-ant-api03-" + "Ab1Cd2Ef3Gh4" * 6
    records = turn_records(1)
    records[0]["message"]["content"] = f"use ANTHROPIC_API_KEY={key} for the call"
    agent_file.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")

    capturer(tmp_path / "on").capture([agent_file])
    capturer(tmp_path / "off", redact=False).capture([agent_file])
    on = (tmp_path / "on" / "sessions" / "capture-claude-code").rglob("*")
    assert not any(key.encode() in p.read_bytes() for p in on if p.is_file())
    [requests] = logged_turns(tmp_path / "on").values()
    assert "[redacted]" in requests[0]
    [kept] = logged_turns(tmp_path / "off").values()
    assert key in kept[0]


def test_an_excluded_agent_is_not_captured(tmp_path: Path, agent_file: Path) -> None:
    write_turns(agent_file, [1])
    [result] = capturer(tmp_path, exclude_agents=frozenset({"claude-code"})).capture([agent_file])
    assert result.outcome is CaptureOutcome.EXCLUDED
    assert not (tmp_path / "sessions" / "capture-claude-code").exists()


def test_files_that_are_no_transcripts_or_cannot_be_read_are_one_line_each(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("just some notes\n", encoding="utf-8")
    missing = tmp_path / "gone.jsonl"
    shutil.copy(FIXTURES / "claude-code-session.jsonl", tmp_path / "ok.jsonl")

    results = capturer(tmp_path).capture([notes, missing, tmp_path / "ok.jsonl"])
    assert {r.path.name: r.outcome for r in results} == {
        "notes.txt": CaptureOutcome.NOT_TRANSCRIPT, "gone.jsonl": CaptureOutcome.FAILED, "ok.jsonl": CaptureOutcome.NEW
    }  # fmt: skip
    assert all("\n" not in r.line() for r in results)


def test_an_answer_still_being_written_is_completed_not_logged_twice() -> None:
    logged = [("q1", "first part")]
    records, rewritten = new_records(logged, [("q1", "first part, then the rest"), ("q2", "a2")], "ts")
    assert not rewritten
    assert records[0] == {"role": "assistant", "content": ", then the rest", "ts": "ts", "turn": 1, "continued": True}
    assert [r["content"] for r in records[1:]] == ["q2", "a2"]


def test_a_file_over_the_capture_limit_is_said_not_read(tmp_path: Path, agent_file: Path) -> None:
    limit = Settings().capture_max_mb * 2**20
    with agent_file.open("wb") as handle:
        handle.truncate(limit + 1)  # sparse: its size only
    [result] = capturer(tmp_path, max_bytes=limit).capture([agent_file])
    assert result.outcome is CaptureOutcome.FAILED
    assert f"over the {limit // 2**20} MiB a transcript may have (capture_max_mb" in result.line()


@pytest.mark.slow
def test_a_session_file_over_64_mib_is_captured_whole(tmp_path: Path, agent_file: Path) -> None:
    """A transcript bigger than ``restore`` reads (64 MiB) is captured up to ``capture_max_mb``: every turn."""
    from ccm_tui.restore.parse import MAX_TRANSCRIPT_BYTES

    big_answer = "the quokka compiler pass " * 4_000  # ~100 KB an answer
    turns = 0
    with agent_file.open("w", encoding="utf-8") as handle:
        while handle.tell() <= MAX_TRANSCRIPT_BYTES + 2**20:
            turns += 1
            records = turn_records(turns)
            records[1]["message"]["content"] = [{"type": "text", "text": f"{big_answer} {turns}"}]
            handle.write("".join(json.dumps(r) + "\n" for r in records))
    cap = capturer(tmp_path, max_bytes=Settings().capture_max_mb * 2**20)
    [result] = cap.capture([agent_file])
    assert result.outcome is CaptureOutcome.NEW and result.turns == turns > 600
    assert list(logged_turns(tmp_path).values()) == [[request(n) for n in range(1, turns + 1)]]
    assert cap.capture([agent_file])[0].outcome is CaptureOutcome.UNCHANGED


def test_a_moved_file_whose_id_is_its_path_stays_one_capture(tmp_path: Path) -> None:
    before = tmp_path / "old-project" / ".aider.chat.history.md"
    before.parent.mkdir()
    shutil.copy(FIXTURES / "aider.chat.history.md", before)
    cap = capturer(tmp_path)
    cap.capture([before])
    after = tmp_path / "renamed-project" / ".aider.chat.history.md"
    before.parent.rename(after.parent)

    [result] = capturer(tmp_path).capture([after])  # a new process, too
    assert result.outcome is CaptureOutcome.MOVED and str(before) in result.note
    assert len(logged_turns(tmp_path, "aider")) == 1


def test_two_watchers_capture_a_file_once(tmp_path: Path, agent_file: Path) -> None:
    """The TUI's watcher and ``ccm-tui watch`` both running: each sees what the other captured."""
    first, second = capturer(tmp_path), capturer(tmp_path)  # both loaded before either wrote
    write_turns(agent_file, [1, 2])
    first.capture([agent_file])
    [result] = second.capture([agent_file])
    assert (result.outcome, result.turns) == (CaptureOutcome.UNCHANGED, 0)
    assert list(logged_turns(tmp_path).values()) == [[request(1), request(2)]]
