"""An empty or ``null`` manifest beside effort logs is damage (issue 25, item 4)."""

from __future__ import annotations

import pytest

from tests.helpers.openai_server import call, text, tool_calls


def _session_with_an_effort(ccm) -> None:
    ccm.server.push(tool_calls(call("open_effort", {"name": "trip"})), text("Opened."))
    assert ccm.send("plan a trip")["active_effort"] == "trip"


@pytest.mark.parametrize("content", ["", "null\n", "# nothing\n"])
def test_an_empty_manifest_beside_effort_logs_is_reported_and_repair_rebuilds_it(ccm, content):
    _session_with_an_effort(ccm)
    (ccm.dir / "manifest.yaml").write_text(content)
    rc, out, err = ccm.run("status", "--session-dir", str(ccm.dir))
    assert rc == 1
    assert len(err.strip().splitlines()) == 1
    assert "is empty but the session has 1 effort log(s)" in err and "ccm-tui repair" in err
    rc, out, err = ccm.run("repair", "--session-dir", str(ccm.dir))
    assert rc == 0, err
    assert [e["id"] for e in ccm.status()["efforts"]] == ["trip"]


def test_a_new_effort_never_adopts_a_log_the_manifest_does_not_name(ccm):
    _session_with_an_effort(ccm)
    old_log = (ccm.dir / "efforts" / "trip.jsonl").read_text()
    (ccm.dir / "efforts" / "stray.jsonl").write_text('{"role": "user", "content": "someone else"}\\n')
    ccm.server.push(tool_calls(call("open_effort", {"name": "stray"})), text("Opened."))
    assert ccm.send("a stray topic")["active_effort"] == "stray-2"
    assert (ccm.dir / "efforts" / "stray.jsonl").read_text() == '{"role": "user", "content": "someone else"}\\n'
    assert (ccm.dir / "efforts" / "trip.jsonl").read_text() == old_log


def test_a_huge_integer_in_the_manifest_names_the_file_and_line_and_repair_still_works(ccm):
    _session_with_an_effort(ccm)
    path = ccm.dir / "manifest.yaml"
    lines = path.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if "status:" in line)
    lines.insert(at + 1, "    tokens: " + "9" * 6_000)
    path.write_text("\n".join(lines) + "\n")
    rc, out, err = ccm.run("status", "--session-dir", str(ccm.dir))
    assert rc == 1 and f"manifest.yaml line {at + 2}:" in err and "ccm-tui repair" in err
    rc, out, err = ccm.run("repair", "--session-dir", str(ccm.dir))
    assert rc == 0, err
    assert [(e["id"], e["status"]) for e in ccm.status()["efforts"]] == [("trip", "open")]  # its entry kept


def test_bare_errno_messages_say_which_path_and_what_to_do(ccm, tmp_path):
    session = tmp_path / "s"
    session.mkdir()
    (session / "efforts").write_text("")
    rc, out, err = ccm.run(*ccm.send_argv("hi")[:1], "--session-dir", str(session), *ccm.send_argv("hi")[3:])
    assert rc == 1 and "[Errno" not in err
    assert "efforts (or a directory above it) exists but is not a directory" in err
