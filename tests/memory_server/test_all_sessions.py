"""``--all-sessions``: a search covers every session under the data directory and says which; read, list
and the writes take a session name, which must be one of them."""

from __future__ import annotations

import json
import shutil

from tests.helpers.mcp_session import first_hit_lines, mcp_server, sessions_root


def two_sessions(template):
    root = sessions_root()
    shutil.copytree(template, root / "work")
    shutil.copytree(template, root / "home")
    with open(root / "home" / "raw.jsonl", "a", encoding="utf-8") as raw:
        raw.write(
            json.dumps({"role": "user", "content": "the walrus recipe needs saffron", "ts": "2026-01-02T00:00:00Z"})
            + "\n"
        )
    (root / "not-a-session").mkdir()  # no session files: not served
    (root / "outside").symlink_to(template)  # a link out of the data directory: not served
    return root


async def test_all_sessions_search_says_which_session_and_reads_take_its_name(template):
    two_sessions(template)
    async with mcp_server("--all-sessions") as client:
        tools = await client.tools()
        walrus = await client.call("search", query="walrus saffron")
        axolotl = await client.call("search", query="axolotl")
        only_work = await client.call("search", query="axolotl", session="work")
        line = first_hit_lines(axolotl.text)[0]
        read = await client.call("read", session="home", id="auth-bug", around_line=line, limit=2)
        unnamed = await client.call("read", id="auth-bug")
        unknown = await client.call("list", session="nope")
        link = await client.call("list", session="outside")
        path = await client.call("list", session="../home")
        listed = await client.call("list", session="work")
        sessions = await client.call("status")
        status = await client.call("status", session="home")
    assert tools["search"].input_schema["required"] == ["query"]  # session optional: every session
    assert "session" in tools["read"].input_schema["required"] and "session" in tools["list"].input_schema["required"]
    assert walrus.text.splitlines()[1].startswith("1. ambient chat · session home")
    assert "session work" not in walrus.text
    assert {"1. auth-bug · session home", "2. auth-bug · session work"} == {
        line.split(" · concluded")[0] for line in axolotl.text.splitlines()[1:] if line[:1].isdigit()
    }
    assert "session home" not in only_work.text and "auth-bug · session work" in only_work.text
    assert read.text.startswith("auth-bug · session home · concluded") and "axolotl" in read.text
    assert unnamed.error and "session: is required" in unnamed.text
    assert unknown.error and "there is no session 'nope': the sessions are home, work" in unknown.text
    assert link.error and "there is no session 'outside'" in link.text
    assert path.error and "'../home' is not a session name" in path.text
    assert listed.text.startswith("session work · turn ")
    assert sessions.text.splitlines() == [
        "2 session(s) (name one for its status, list or reads):",
        "home · 1 efforts, 0 open",
        "work · 1 efforts, 0 open",
    ]
    assert "Concluded:" in status.text


async def test_all_sessions_writes_name_their_session(template):
    root = two_sessions(template)
    async with mcp_server("--all-sessions", "--allow-writes") as client:
        noted = await client.call("remember", session="work", text="The kiln fires at 1240 degrees.")
        found = await client.call("search", query="kiln degrees")
        unnamed = await client.call("remember", text="no session")
    assert noted.text.startswith("Noted in effort notes of session work, line 1")
    assert found.text.splitlines()[1].startswith("1. notes · session work")
    assert unnamed.error and "session: is required" in unnamed.text
    assert not (root / "home" / "efforts" / "notes.jsonl").exists()


async def test_a_session_whose_name_has_a_space_is_served_like_any_other(template):
    root = sessions_root()
    shutil.copytree(template, root / "work notes")  # a name `ccm-tui --session` and the picker take
    async with mcp_server("--all-sessions") as client:
        found = await client.call("search", query="axolotl")
        listed = await client.call("list", session="work notes")
    assert "auth-bug · session work notes" in found.text
    assert not listed.error and listed.text.startswith("session work notes · turn ")
