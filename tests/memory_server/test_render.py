"""How a read shows one log line to an MCP client."""

from __future__ import annotations

from ccm_tui.memory_server.render import message_text


def test_a_withdrawn_line_says_so_as_a_search_passage_does():
    shown = {"line": 5, "role": "user", "content": "Is Zanzibar the spice island?"}
    assert message_text(shown) == "5 user: Is Zanzibar the spice island?"
    assert message_text({**shown, "withdrawn": True}) == "5 user (withdrawn): Is Zanzibar the spice island?"
