"""``ccm-tui export`` (Markdown, JSON, JSON lines; one effort, a session, every session) and ``ccm-tui
import``: an export landed in another session gives the same efforts (a round trip)."""

from __future__ import annotations

import asyncio
import json

from ccm_tui.config import Settings
from ccm_tui.core.service.controller import SessionController
from ccm_tui.core.service.run_state import Remember
from ccm_tui.restore.parse import detect_format
from tests.helpers.cli_session import CCM, conclude_auth_bug, open_auth_bug
from tests.helpers.openai_server import text

KEYS = ("id", "name", "status", "summary")


def make_session(ccm: CCM) -> None:
    open_auth_bug(ccm)
    ccm.server.push(text('Try "refresh" tokens — naïve fix?'))
    ccm.send("What now?\nTwo lines.")
    conclude_auth_bug(ccm)
    ccm.server.push(text("Hi!"))
    ccm.send("hello, ambient")
    ccm.server.push(text("Opened."))
    ccm.send("/open pepper grinder")
    ccm.server.push(text("Burr grinders."))
    ccm.send("Which grinder for pepper?")

    async def note() -> None:
        controller = SessionController(ccm.dir, Settings())
        await controller.open()
        try:
            assert (await controller.run(Remember("The spanner is 12 mm.", "auth-bug"))).ok
        finally:
            await controller.close()

    asyncio.run(note())


def exported(ccm: CCM, *extra: str) -> dict:
    rc, out, err = ccm.run("export", "--session-dir", str(ccm.dir), "--format", "json", *extra)
    assert rc == 0, err
    return json.loads(out)


def shape(effort: dict) -> dict:
    """What an import keeps (an open effort comes back reopened: its log gains the reopening's marker)."""
    messages = [(m["role"], m["content"], m.get("ts")) for m in effort["messages"] if m["role"] != "system"]
    kept = {k: effort[k] for k in KEYS if k != "summary" or effort["status"] == "concluded"}
    return {**kept, "messages": messages}


def test_json_export_holds_efforts_ambient_chat_and_notes(ccm):
    make_session(ccm)
    document = exported(ccm)
    assert document["format"] == "ccm-tui-export" and document["version"] == 1
    (session,) = document["sessions"]
    efforts = {e["id"]: e for e in session["efforts"]}
    assert set(efforts) == {"auth-bug", "pepper-grinder"}
    auth = efforts["auth-bug"]
    assert auth["status"] == "concluded" and auth["summary"].startswith("Auth bug")
    assert auth["concluded_at"] and auth["created"]
    assert any('"refresh"' in m["content"] for m in auth["messages"])
    assert efforts["pepper-grinder"]["status"] == "open" and efforts["pepper-grinder"]["summary"] is None
    assert [m["content"] for m in session["ambient"]] == ["hello, ambient", "Hi!"]
    assert session["notes"] == [
        {
            "effort_id": "auth-bug",
            "agent": session["notes"][0]["agent"],
            "content": "The spanner is 12 mm.",
            "ts": session["notes"][0]["ts"],
        }
    ]
    one = exported(ccm, "--effort", "pepper-grinder")
    assert [e["id"] for e in one["sessions"][0]["efforts"]] == ["pepper-grinder"] and one["sessions"][0][
        "ambient"
    ] == []


def test_jsonl_markdown_and_a_directory_target(ccm, tmp_path):
    make_session(ccm)
    out = tmp_path / "out"
    rc, printed, err = ccm.run("export", "--session-dir", str(ccm.dir), "--format", "jsonl", "-o", f"{out}/")
    assert rc == 0, err
    lines = [json.loads(line) for line in (out / "session.jsonl").read_text().splitlines()]
    assert [r["type"] for r in lines[:2]] == ["export", "session"]
    assert {r["id"] for r in lines if r["type"] == "effort"} == {"auth-bug", "pepper-grinder"}
    assert sum(r["type"] == "ambient" for r in lines) == 2 and sum(r["type"] == "note" for r in lines) == 1
    rc, printed, err = ccm.run("export", "--session-dir", str(ccm.dir), "--effort", "auth-bug")
    assert rc == 0 and printed.startswith("# Effort: auth-bug") and "## Summary" in printed
    rc, printed, err = ccm.run("export", "--session-dir", str(ccm.dir), "-o", str(tmp_path / "all.md"))
    assert rc == 0 and "## Ambient chat" in (tmp_path / "all.md").read_text()
    rc, _, err = ccm.run("export", "--session-dir", str(ccm.dir), "--effort", "nope")
    assert rc == 1 and "nope" in err and len(err.strip().splitlines()) == 1


def test_all_sessions(ccm, tmp_path, monkeypatch):
    home = tmp_path / "home"
    monkeypatch.setenv("CCM_HOME", str(home))
    ccm.dir = home / "sessions" / "first"
    make_session(ccm)
    rc, out, err = ccm.run("export", "--all-sessions", "--format", "json")
    assert rc == 0, err
    assert [s["name"] for s in json.loads(out)["sessions"]] == ["first"]
    rc, _, err = ccm.run("export", "--all-sessions", "--session-dir", str(ccm.dir))
    assert rc == 2


def test_an_export_imported_elsewhere_gives_the_same_efforts(ccm, tmp_path):
    make_session(ccm)
    for fmt in ("json", "jsonl"):
        file = tmp_path / f"export.{fmt}"
        rc, _, err = ccm.run("export", "--session-dir", str(ccm.dir), "--format", fmt, "-o", str(file))
        assert rc == 0, err
        assert detect_format(file) == "ccm-export"
        other = tmp_path / f"other-{fmt}"
        rc, out, err = ccm.run("import", "--session-dir", str(other), str(file))
        assert rc == 0, err
        again = CCM(ccm.server, other, ccm.capsys)
        before = sorted((shape(e) for e in exported(ccm)["sessions"][0]["efforts"]), key=lambda e: e["id"])
        after = sorted((shape(e) for e in exported(again)["sessions"][0]["efforts"]), key=lambda e: e["id"])
        assert after == before
        rc, out, err = ccm.run("import", "--session-dir", str(other), str(file))
        assert rc == 0 and "0 effort(s) imported" in out  # nothing twice
    rc, _, err = ccm.run("import", "--session-dir", str(tmp_path / "x"), str(tmp_path / "export.json.nope"))
    assert rc == 1 and len(err.strip().splitlines()) == 1
    (tmp_path / "bad.json").write_text('{"format": "other"}')
    rc, _, err = ccm.run("import", "--session-dir", str(tmp_path / "x"), str(tmp_path / "bad.json"))
    assert rc == 1 and "not a ccm-tui export" in err
