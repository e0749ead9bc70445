"""What the tools answer is for the agent calling them: a session other than the one served is refused (not
searched in its stead), integers are integers, an argument a tool does not take is refused, a line past the
end is named with the log's length, and no local path reaches the agent."""

from __future__ import annotations

import os
import re
from pathlib import Path

from tests.helpers.mcp_session import mcp_server


def local_paths(*texts: str) -> list[str]:
    """The texts that hold a path of this machine (the test's data directory, or any absolute path)."""
    home = os.environ["CCM_HOME"]
    return [t for t in texts if home in t or re.search(r"(?<![\w.])/(tmp|home|root|Users|var)/", t)]


async def test_serving_one_session_a_session_argument_naming_another_is_refused(session_dir):
    async with mcp_server() as client:
        status_other = await client.call("status", session="other")
        search_other = await client.call("search", query="axolotl", session="other")
        read_other = await client.call("read", id="auth-bug", session="work")
        status_own = await client.call("status", session="default")
        search_own = await client.call("search", query="axolotl", session="default")
        search_null = await client.call("search", query="axolotl", session=None)
    for answer in (status_other, search_other, read_other):
        assert answer.error, answer.text
        assert "this server serves session 'default' only" in answer.text and "leave session out" in answer.text
    assert 'not "other"' in status_other.text and 'not "work"' in read_other.text
    assert not status_own.error and status_own.text.startswith("session default  ·  turn ")
    assert not search_own.error and "1. auth-bug · concluded" in search_own.text
    assert not search_null.error and "1. auth-bug · concluded" in search_null.text


STRICT = [
    ("read", {"id": "auth-bug", "around_line": True}, "around_line: input should be a whole number", "(got true)"),
    ("read", {"id": "auth-bug", "around_line": "3"}, "around_line: input should be a whole number", '(got "3")'),
    ("read", {"id": "auth-bug", "offset": False}, "offset: input should be a whole number", "(got false)"),
    ("read", {"id": "auth-bug", "limit": "5"}, "limit: input should be a whole number", '(got "5")'),
    ("read", {"id": "auth-bug", "around_line": 3.5}, "around_line: input should be a valid integer", "fractional"),
    ("search", {"query": "axolotl", "limit": True}, "limit: input should be a whole number", "(got true)"),
    ("list", {"limit": "3"}, "limit: input should be a whole number", '(got "3")'),
    ("list", {"offset": True}, "offset: input should be a whole number", "(got true)"),
    ("read", {"id": "auth-bug", "line": 3}, "read takes no argument 'line'", "around_line, id, limit, offset"),
    ("search", {"q": "axolotl"}, "search takes no argument 'q'", "its arguments are: limit, query"),
    ("status", {"verbose": True}, "status takes no argument 'verbose'", "its arguments are: no arguments"),
]


async def test_integers_are_integers_and_unknown_arguments_are_refused(session_dir):
    async with mcp_server() as client:
        tools = await client.tools()
        answers = [await client.call(tool, **arguments) for tool, arguments, _, _ in STRICT]
        three = await client.call("read", id="auth-bug", around_line=3, limit=2)
        three_float = await client.call("read", id="auth-bug", around_line=3.0, limit=2)
    for (tool, arguments, said, got), answer in zip(STRICT, answers, strict=True):
        assert answer.error, (tool, arguments, answer.text)
        assert said in answer.text and got in answer.text, answer.text
    assert not three.error and three.text == three_float.text  # 3.0 is an integer to JSON Schema
    around = tools["read"].input_schema["properties"]["around_line"]
    assert {"type": "integer", "minimum": 1, "maximum": 100_000_000} in around["anyOf"]  # the schema says so too


async def test_a_line_past_the_end_is_named_with_the_log_length(session_dir):
    async with mcp_server() as client:
        far = await client.call("read", id="auth-bug", around_line=1_000_000)
        near = await client.call("read", id="auth-bug", around_line=20, limit=30)
        last = await client.call("read", id="auth-bug", around_line=8, limit=30)
        page = await client.call("read", id="auth-bug", offset=9)
        ambient = await client.call("read", id="ambient", around_line=5000, limit=30)
    assert (
        far.error and "effort 'auth-bug' has 8 log lines; line 1000000 does not exist (it is past the end)" in far.text
    )
    assert near.error and "effort 'auth-bug' has 8 log lines; line 20 does not exist" in near.text
    assert not last.error and "8 assistant: Great, concluded the auth bug." in last.text
    assert page.error and "has 8 log lines; line 9 does not exist" in page.text
    assert ambient.error and re.search(r"the ambient chat has \d+ log lines; line 5000 does not exist", ambient.text)


async def test_no_local_path_reaches_the_agent(session_dir):
    async with mcp_server() as client:
        status = await client.call("status")
    (session_dir / "manifest.yaml").write_text("efforts: [\n  - {id: x, oops\n", encoding="utf-8")
    async with mcp_server() as client:
        broken = [await client.call(tool, **args) for tool, args in [("status", {}), ("search", {"query": "x"})]]
        broken += [await client.call("list"), await client.call("read", id="auth-bug")]
    async with mcp_server("--session", "nosuch", "--allow-writes") as client:
        missing = [await client.call("status"), await client.call("remember", text="a note")]
    assert status.text.splitlines()[0].startswith("session default  ·  turn ")
    for answer in broken:
        assert answer.error and "session default cannot be read: manifest.yaml line 2" in answer.text, answer.text
    for answer in missing:
        assert answer.error and "session nosuch holds no conversation yet" in answer.text, answer.text
    assert not local_paths(status.text, *(a.text for a in broken + missing))


def test_paths_are_shown_relative_to_the_session_or_the_sessions_directory(tmp_path):
    from ccm_tui.memory_server import Scope

    root = tmp_path / "sessions"
    one, every = Scope(directory=root / "work"), Scope(root=root)
    assert one.private(f"{root}/work/manifest.yaml line 2: bad") == "manifest.yaml line 2: bad"
    assert one.private(f"no session at {root}/work") == "no session at session work"
    assert every.private(f"{root}/home/efforts/a.jsonl: denied") == "home/efforts/a.jsonl: denied"
    assert every.private("cannot open '/home/someone/.cache/x.db'") == "cannot open 'x.db'"
    assert one.private("'../../etc/passwd' is not an effort id") == "'../../etc/passwd' is not an effort id"
    linked = tmp_path / "link"
    linked.symlink_to(root, target_is_directory=True)
    root.mkdir()
    assert Scope(directory=linked / "work").private(f"{Path(os.path.realpath(linked))}/work/x") == "x"
