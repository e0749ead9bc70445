"""``ccm-tui sessions list|rename|delete|archive|unarchive|fork`` through the real entry point, with the
MCP server's view after each (issue 41, item 3)."""

from __future__ import annotations

import contextlib
import json
import shutil
from pathlib import Path

import pytest

from ccm_tui.cli import main
from ccm_tui.core.session.lock import Presence
from tests.helpers.mcp_session import DETAIL, mcp_server, sessions_root
from tests.helpers.mcp_session import template as template  # (a fixture)
from tests.helpers.sessionkit import held_by_another_process


def ccm(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def listed(capsys: pytest.CaptureFixture[str], *extra: str) -> dict[str, dict]:
    rc, out, err = ccm(capsys, "sessions", "list", "--json", *extra)
    assert rc == 0, err
    return {s["name"]: s for s in json.loads(out)["sessions"]}


def every_byte(root: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file())


def files_of(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


@pytest.fixture
def two(template: Path) -> Path:
    root = sessions_root()
    shutil.copytree(template, root / "work")
    shutil.copytree(template, root / "home")
    return root


async def test_archive_hides_a_session_from_the_list_and_all_sessions_until_unarchived(two, capsys):
    rc, out, _ = ccm(capsys, "sessions", "archive", "home")
    assert (rc, out) == (0, "home is archived\n")
    assert set(listed(capsys)) == {"work"}
    everything = listed(capsys, "--archived")
    assert everything["home"]["archived"] is True and everything["work"]["archived"] is False
    async with mcp_server("--all-sessions") as client:
        found = await client.call("search", query="axolotl")
        status = await client.call("status")
        named = await client.call("list", session="home")
    assert "session work" in found.text and "session home" not in found.text
    assert "home ·" not in status.text and "work ·" in status.text
    assert named.error and "there is no session 'home'" in named.text
    async with mcp_server("--session", "home") as client:  # named, an archived session is still served
        direct = await client.call("search", query="axolotl")
    assert "auth-bug" in direct.text
    async with mcp_server("--all-sessions", "--include-archived") as client:  # asked for: served
        included = await client.call("search", query="axolotl")
    assert "session home" in included.text and "session work" in included.text
    rc, out, _ = ccm(capsys, "sessions", "unarchive", "home")
    assert (rc, out) == (0, "home is not archived\n")
    assert set(listed(capsys)) == {"home", "work"}
    async with mcp_server("--all-sessions") as client:
        again = await client.call("search", query="axolotl")
    assert "session home" in again.text and "session work" in again.text


async def test_delete_asks_first_refuses_a_session_in_use_and_then_leaves_nothing(two, capsys):
    root = two
    rc, _, err = ccm(capsys, "sessions", "delete", "home")  # no terminal to ask on (pytest's stdin)
    assert rc == 2 and "pass --yes" in err and (root / "home").is_dir()
    with held_by_another_process(root / "home") as holder:
        rc, _, err = ccm(capsys, "sessions", "delete", "home", "--yes")
        assert rc == 1 and f"in use by pid {holder}" in err
    presence = Presence(root / "home")
    presence.hold()  # a TUI has it open
    try:
        rc, _, err = ccm(capsys, "sessions", "delete", "home", "--yes")
        assert rc == 1 and "is open in another ccm-tui" in err
    finally:
        presence.release()
    assert DETAIL.encode() in (root / "home" / "efforts" / "auth-bug.jsonl").read_bytes()
    rc, out, err = ccm(capsys, "sessions", "delete", "home", "--yes")
    assert (rc, out) == (0, "deleted home\n"), err
    assert sorted(p.name for p in root.iterdir()) == ["work"]  # no .deleting left, nothing of home
    assert set(listed(capsys)) == {"work"}
    async with mcp_server("--all-sessions") as client:
        found = await client.call("search", query="axolotl")
    assert "session work" in found.text and "session home" not in found.text
    rc, _, err = ccm(capsys, "sessions", "delete", "home", "--yes")
    assert rc == 1 and "there is no session 'home'" in err


def test_a_delete_cut_short_by_a_kill_is_finished_by_the_next_listing(two, capsys):
    root = two
    (root / ".deleting").mkdir()
    (root / "home").rename(root / ".deleting" / "123-456")  # the rename done, the removal killed
    assert set(listed(capsys)) == {"work"}
    assert sorted(p.name for p in root.iterdir()) == ["work"]  # swept: nothing of home is left


async def test_fork_at_a_turn_holds_what_the_original_held_then_and_leaves_it_untouched(two, capsys, tmp_path):
    root = two
    before = files_of(root / "work")
    rc, out, err = ccm(capsys, "sessions", "fork", "work", "early", "--turn", "3")
    assert rc == 0, err
    assert out.startswith("early: work up to turn 3 (1 effort, ")
    assert files_of(root / "work") == before  # the original is only read
    rc, out, _ = ccm(capsys, "status", "--session", "early", "--json")
    status = json.loads(out)
    assert status["turn"] == 3
    assert [(e["id"], e["status"]) for e in status["efforts"]] == [("auth-bug", "open")]
    rc, out, _ = ccm(capsys, "search", "--session", "early", "--json", "axolotl")
    assert [r["id"] for r in json.loads(out)["results"]] == ["auth-bug"]  # turn 3 wrote it
    rc, out, _ = ccm(capsys, "search", "--session", "early", "--json", "weather")
    assert json.loads(out)["results"] == []  # turns 6 and later are not in the fork
    assert b"weather" not in every_byte(root / "early")
    async with mcp_server("--session", "early") as client:
        found = await client.call("search", query="axolotl")
        weather = await client.call("search", query="weather")
    assert "auth-bug · active" in found.text  # open in the fork, as it was at turn 3
    assert weather.text.startswith("Nothing found")
    rc, _, err = ccm(capsys, "sessions", "fork", "work", "first", "--turn", "1")
    assert rc == 0, err
    rc, out, _ = ccm(capsys, "status", "--session", "first", "--json")
    assert json.loads(out)["efforts"] == [] and json.loads(out)["turn"] == 1
    rc, _, err = ccm(capsys, "sessions", "fork", "work", "later", "--turn", "999")
    assert rc == 1 and "there is no turn 999" in err and not (root / "later").exists()
    rc, _, err = ccm(capsys, "sessions", "fork", "work", "early")
    assert rc == 1 and "already a session named 'early'" in err
    assert sorted(p.name for p in root.iterdir()) == ["early", "first", "home", "work"]


def test_rename_and_the_list_in_words(two, capsys):
    rc, out, _ = ccm(capsys, "sessions", "rename", "home", "at home")
    assert (rc, out) == (0, "home is now at home\n")
    rc, out, _ = ccm(capsys, "sessions", "list")
    names = [line.split("  ")[0] for line in out.splitlines()]
    assert sorted(names) == ["at home", "work"]
    for line in out.splitlines():  # the record's size, never the derived index with its WAL
        assert " KB " in line and " efforts " in line
    for action, *rest in (("rename", "x"), ("delete", "--yes"), ("archive",), ("fork", "x")):
        rc, _, err = ccm(capsys, "sessions", action, "../sessions/work", *rest)  # a name, never a path
        assert rc == 2 and "is not a session name" in err, action
    assert sorted(p.name for p in two.iterdir()) == ["at home", "work"]


def test_the_session_is_used_after_a_fork_through_send(two, capsys):
    from tests.helpers.openai_server import FakeLLMServer, text

    with contextlib.ExitStack() as stack:
        server = stack.enter_context(FakeLLMServer())
        ccm(capsys, "sessions", "fork", "work", "branch", "--turn", "3")
        server.push(text("Patched."))
        rc, out, err = ccm(
            capsys,
            "send",
            "--session",
            "branch",
            "--model",
            "openai/fake-model",
            "--api-base",
            server.base_url,
            "--json",
            "I patched the middleware",
        )
        assert rc == 0, err
        assert json.loads(out)["logged_to"] == "auth-bug"
    rc, out, _ = ccm(capsys, "status", "--session", "branch", "--json")
    assert json.loads(out)["turn"] == 4
    assert b"I patched the middleware" in (sessions_root() / "branch" / "efforts" / "auth-bug.jsonl").read_bytes()
    assert b"I patched the middleware" not in every_byte(sessions_root() / "work")
