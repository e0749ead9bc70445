"""A message too long to travel whole in later requests is said so where it happens: the turn that
logs it carries a banner (head and tail kept later, the whole text in the log and in search)."""

from __future__ import annotations

import os
from pathlib import Path

from tests.helpers.openai_server import text

LONG = "\n".join(f"line {i}: the deploy step {i} copies the artefacts to the bucket" for i in range(120))


def test_a_long_message_and_a_long_reply_say_that_later_requests_shorten_them(ccm):
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "ccm-tui" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("message_max_tokens = 500\n", encoding="utf-8")
    ccm.server.push(text("Short answer."))
    out = ccm.send("Here is the deploy log:\n" + LONG)
    notes = [b for b in out["banners"] if "later requests carry its first and last parts" in b]
    assert len(notes) == 1 and notes[0].startswith("Your message is ")
    assert "(500 tokens)" in notes[0]
    assert ccm.chat_requests()[-1]["messages"][-1]["content"].endswith(LONG)  # this request: whole

    ccm.server.push(text(LONG))
    out = ccm.send("And the reply?")
    assert [b.split(" is ")[0] for b in out["banners"] if "later requests carry" in b] == ["The reply"]

    ccm.server.push(text("ok"))
    out = ccm.send("short one")
    assert not [b for b in out["banners"] if "later requests carry" in b]
    assert "tokens of this message are left out" in ccm.last_context_text()
