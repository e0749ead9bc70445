"""An empty or ``null`` manifest beside effort logs is damage (issue 25, item 4)."""

from __future__ import annotations

import pytest

from tests.fakes.openai_server import call, text, tool_calls


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
