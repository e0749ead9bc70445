"""``ccm-tui effort rename|summary|pin|unpin|merge`` through the real entry point: what the next
launch, the model's next request and the MCP server see after each (issue 41, item 2)."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from ccm_tui.cli import main
from tests.helpers.mcp_session import DETAIL, MODEL, SUMMARY, mcp_server
from tests.helpers.mcp_session import session_dir as session_dir  # (a fixture)
from tests.helpers.mcp_session import template as template  # (a fixture)
from tests.helpers.openai_server import FakeLLMServer, call, text, tool_calls


def ccm(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """The command line in-process, on a thread of its own (its asyncio.run needs no running loop)."""
    capsys.readouterr()
    with ThreadPoolExecutor(1) as pool:
        rc = pool.submit(main, list(argv)).result()
    out, err = capsys.readouterr()
    return rc, out, err


def edit(capsys, directory: Path, *argv: str, expect: int = 0) -> str:
    rc, out, err = ccm(capsys, "effort", argv[0], "--session-dir", str(directory), *argv[1:])
    assert rc == expect, err + out
    return out + err


def effort(capsys, directory: Path, effort_id: str) -> dict:
    rc, out, err = ccm(capsys, "status", "--session-dir", str(directory), "--json")
    assert rc == 0, err
    return next(e for e in json.loads(out)["efforts"] if e["id"] == effort_id)


def events(directory: Path, name: str) -> list[dict]:
    lines = (directory / "events.jsonl").read_text().splitlines()
    return [r for r in map(json.loads, lines) if r.get("event") == name]


def send(capsys, server: FakeLLMServer, directory: Path, message: str, *replies) -> dict:
    server.push(*replies)
    argv = ["send", "--session-dir", str(directory), "--model", MODEL, "--api-base", server.base_url, "--json"]
    rc, out, err = ccm(capsys, *argv, message)
    assert rc == 0, err
    return json.loads(out)


def system_text(server: FakeLLMServer) -> str:
    """The request's context before the turn: the system prompt and the layers (the summaries among them)."""
    return "\n".join(str(m["content"]) for m in server.chat_requests()[-1]["messages"][:-1])


async def test_rename_keeps_the_id_and_every_reader_shows_the_name(session_dir, capsys):
    out = edit(capsys, session_dir, "rename", "auth-bug", "Token refresh")
    assert "auth-bug is now called “Token refresh”" in out
    assert effort(capsys, session_dir, "auth-bug")["name"] == "Token refresh"  # a new process: on disk
    assert (session_dir / "efforts" / "auth-bug.jsonl").is_file()  # the log keeps its name
    assert [(e["name"], e["previous"]) for e in events(session_dir, "effort_renamed")] == [
        ("Token refresh", "auth bug")
    ]
    rc, out, _ = ccm(capsys, "search", "--session-dir", str(session_dir), "--json", "Token refresh")
    assert json.loads(out)["results"][0]["id"] == "auth-bug"  # found by its new name
    async with mcp_server() as client:
        listed = await client.call("list")
    assert "Token refresh" in listed.text
    assert "at least one letter" in edit(capsys, session_dir, "rename", "auth-bug", "   ", expect=1)
    assert "no effort with id 'nope'" in edit(capsys, session_dir, "rename", "nope", "x", expect=1)


async def test_an_edited_summary_replaces_the_models_in_context_and_the_models_stays_in_the_log(session_dir, capsys):
    mine = "Auth bug: the refresh header was dropped by the axolotl middleware; fixed with an interceptor."
    out = edit(capsys, session_dir, "summary", "auth-bug", mine)
    assert "Summary of auth-bug edited" in out
    entry = effort(capsys, session_dir, "auth-bug")
    assert (entry["summary"], entry["summary_by"], entry["in_memory"]) == (mine, "user", True)
    [edited] = events(session_dir, "summary_edited")
    assert (edited["summary"], edited["replaced"]) == (mine, SUMMARY)
    with FakeLLMServer() as server:  # the relaunch: the model's next request carries the user's summary
        send(capsys, server, session_dir, "what was the auth bug about?", text("The refresh header."))
        system = system_text(server)
    assert mine in system and SUMMARY not in system
    async with mcp_server() as client:
        found = await client.call("search", query="interceptor axolotl")
    assert "auth-bug" in found.text
    rc, out, _ = ccm(capsys, "search", "--session-dir", str(session_dir), "--json", "interceptor")
    assert json.loads(out)["results"][0]["summary"] == mine


def test_a_pinned_summary_outlives_the_eviction_threshold_and_unpinned_it_leaves(session_dir, capsys, monkeypatch):
    config = Path(session_dir).parent.parent / "config.toml"
    config.write_text("summary_eviction_threshold = 2\n")
    monkeypatch.setenv("CCM_CONFIG", str(config))
    assert "pinned: its summary stays" in edit(capsys, session_dir, "pin", "auth-bug")
    assert "nothing to change" in edit(capsys, session_dir, "pin", "auth-bug")
    assert effort(capsys, session_dir, "auth-bug")["pinned"] is True
    with FakeLLMServer() as server:
        for i in range(3):  # nothing mentions the auth bug: past the threshold
            send(capsys, server, session_dir, f"weather chat {i}", text("Sunny."))
        assert SUMMARY in system_text(server)
        assert effort(capsys, session_dir, "auth-bug")["in_memory"] is True
        edit(capsys, session_dir, "unpin", "auth-bug")
        for i in range(3):
            send(capsys, server, session_dir, f"more weather {i}", text("Rainy."))
        assert SUMMARY not in system_text(server)
    entry = effort(capsys, session_dir, "auth-bug")
    assert entry["in_memory"] is False and "pinned" not in entry
    assert [e["event"] for e in events(session_dir, "effort_pinned") + events(session_dir, "effort_unpinned")] == [
        "effort_pinned",
        "effort_unpinned",
    ]


async def test_merge_puts_both_logs_under_the_kept_id_and_the_other_points_there(session_dir, capsys):
    with FakeLLMServer() as server:
        send(
            capsys,
            server,
            session_dir,
            "Another thing on auth: the refresh token rotates",
            tool_calls(call("open_effort", {"name": "token rotation"}), content="Opening."),
            text("Rotation noted: the quokka header carries it."),
        )
        send(capsys, server, session_dir, "/conclude token-rotation", text("Token rotation: quokka header."))
    assert effort(capsys, session_dir, "token-rotation")["status"] == "concluded"
    refused = edit(capsys, session_dir, "merge", "token-rotation", "token-rotation", expect=1)
    assert "cannot be merged into itself" in refused
    out = edit(capsys, session_dir, "merge", "token-rotation", "auth-bug")
    assert "token-rotation merged into auth-bug (2 lines)" in out
    log = [json.loads(line) for line in (session_dir / "efforts" / "auth-bug.jsonl").read_text().splitlines()]
    assert log[-3]["merged_from"] == "token-rotation" and "quokka" in log[-1]["content"]
    assert effort(capsys, session_dir, "token-rotation")["merged_into"] == "auth-bug"
    again = edit(capsys, session_dir, "merge", "token-rotation", "auth-bug", expect=1)
    assert "already merged into 'auth-bug'" in again
    for word in ("quokka", "axolotl"):  # both logs' lines, found under the kept id only
        rc, out, _ = ccm(capsys, "search", "--session-dir", str(session_dir), "--json", word)
        assert [r["id"] for r in json.loads(out)["results"]] == ["auth-bug"], word
    rc, out, _ = ccm(capsys, "status", "--session-dir", str(session_dir))
    assert "token-rotation" not in out  # lives on in auth-bug
    async with mcp_server() as client:
        found = await client.call("search", query="quokka")
        listed = await client.call("list")
    assert "auth-bug" in found.text and "token-rotation" not in found.text
    assert "auth-bug" in listed.text and "token-rotation" not in listed.text
    assert DETAIL.split()[1] in (session_dir / "efforts" / "auth-bug.jsonl").read_text()
