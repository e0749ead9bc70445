"""A hand-edited ``manifest.yaml`` cannot give an effort a reserved id (issue 42, item 5): ``id: ambient``
would make MCP reads answer from the ambient chat and ``send`` write ``efforts/ambient.jsonl``."""

from __future__ import annotations

from tests.helpers.cli_session import open_auth_bug
from tests.helpers.openai_server import text


def test_a_reserved_id_written_into_the_manifest_is_refused_with_a_pointer_to_repair(ccm):
    open_auth_bug(ccm)
    manifest = ccm.dir / "manifest.yaml"
    manifest.write_text(manifest.read_text().replace("id: auth-bug", "id: ambient"))
    ccm.server.push(text("Sure."))
    calls = len(ccm.server.chat_requests())
    rc, out, err = ccm.run(*ccm.send_argv("anything new?"))
    assert rc != 0
    assert "reserved id 'ambient'" in err and "repair" in err
    assert len(err.strip().splitlines()) == 1, err
    assert not (ccm.dir / "efforts" / "ambient.jsonl").exists()
    assert len(ccm.server.chat_requests()) == calls  # refused before any call
    rc, out, err = ccm.run("status", "--session-dir", str(ccm.dir))
    assert rc != 0 and "reserved id" in err
