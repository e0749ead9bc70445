"""opencode's storage folder: a session read from its messages and parts, a bulk parse that finds only
sessions, ids that are names and never paths."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ccm_tui.restore.parse import parse_transcript
from ccm_tui.restore.turns import TranscriptError


def write_opencode_storage(root: Path) -> Path:
    """A storage tree in opencode's JSON layout: session, messages, parts."""
    storage = root / "storage"

    def write(relative: str, data: object) -> None:
        path = storage / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data) if not isinstance(data, str) else data, encoding="utf-8")

    write(
        "session/proj1/ses_abc.json",
        {"id": "ses_abc", "title": "Fix tests", "directory": "/w/app", "time": {"created": 1}},
    )
    write("message/ses_abc/msg_1.json", {"id": "msg_1", "sessionID": "ses_abc", "role": "user", "time": {"created": 1}})
    write(
        "part/msg_1/prt_1.json", {"id": "prt_1", "messageID": "msg_1", "type": "text", "text": "fix the failing test"}
    )
    write(
        "part/msg_1/prt_2.json",
        {"id": "prt_2", "messageID": "msg_1", "type": "text", "text": "<ctx>", "synthetic": True},
    )
    write(
        "message/ses_abc/msg_2.json",
        {"id": "msg_2", "sessionID": "ses_abc", "role": "assistant", "time": {"created": 2}},
    )
    write("part/msg_2/prt_3.json", {"id": "prt_3", "type": "reasoning", "text": "HIDDEN"})
    write(
        "part/msg_2/prt_4.json",
        {
            "id": "prt_4",
            "type": "tool",
            "tool": "bash",
            "state": {"status": "completed", "input": {"command": "npm test"}, "output": "1 failing"},
        },
    )
    write(
        "part/msg_2/prt_5.json",
        {
            "id": "prt_5",
            "type": "tool",
            "tool": "edit",
            "state": {"status": "completed", "input": {"filePath": "/w/app/a.ts"}, "output": ""},
        },
    )
    write("part/msg_2/prt_6.json", {"id": "prt_6", "type": "text", "text": "Fixed."})
    write("part/msg_2/prt_7.json", "{broken")
    write("message/ses_abc/msg_3.json", {"id": "msg_3", "sessionID": "ses_abc", "role": "user", "time": {"created": 3}})
    write("part/msg_3/prt_8.json", {"id": "prt_8", "type": "text", "text": "thanks, commit it"})
    return storage / "session" / "proj1" / "ses_abc.json"


def test_opencode_storage_session_reads_its_messages_and_parts(tmp_path: Path) -> None:
    session_file = write_opencode_storage(tmp_path)

    parsed = parse_transcript(session_file)

    assert parsed.format == "opencode-storage"
    assert parsed.title == "Fix tests" and parsed.cwd == "/w/app"
    assert [t.user for t in parsed.turns] == ["fix the failing test", "thanks, commit it"]
    assert parsed.turns[0].agent_responses == [
        '[bash] {"command": "npm test"}\n\n[result] 1 failing\n\n[edit] {"filePath": "/w/app/a.ts"}\n\nFixed.'
    ]
    assert [(a.path, a.action) for a in parsed.turns[0].artifacts] == [("/w/app/a.ts", "edited")]
    assert parsed.skipped == ["line 0: unreadable part file prt_7.json"]


def test_bulk_parse_of_an_opencode_storage_finds_only_sessions(tmp_path: Path, capsys) -> None:
    from ccm_tui.cli import main

    write_opencode_storage(tmp_path)
    capsys.readouterr()
    rc = main(["restore", str(tmp_path / "storage"), "--parse-only", "--json"])
    documents = json.loads(capsys.readouterr().out)["files"]

    assert rc == 0
    assert [Path(d["file"]).name for d in documents] == ["ses_abc.json"]
    assert len(documents[0]["turns"]) == 2


def test_opencode_storage_ids_are_names_never_paths(tmp_path: Path) -> None:
    """A session or message id like "/tmp/x" or "../../etc" must not make the parser read elsewhere."""
    outside = tmp_path / "outside"
    (outside / "m").mkdir(parents=True)
    (outside / "m" / "secret.json").write_text(json.dumps({"id": "m", "role": "user", "text": "SECRET"}))
    session_file = write_opencode_storage(tmp_path / "a")
    data = json.loads(session_file.read_text())
    data["id"] = str(outside)
    session_file.write_text(json.dumps(data))

    with pytest.raises(TranscriptError, match="not a plain name"):
        parse_transcript(session_file, "opencode-storage")
