"""A reply that trickles forever is ended (issue 42, item 7): ``request_timeout`` applies per read, so one
chunk every few seconds kept ``send`` running for good; ``reply_max_seconds`` bounds the reply as a whole
and ends it as cut, said in one line."""

from __future__ import annotations

import os
from pathlib import Path

from tests.helpers.openai_server import endless


def test_a_trickling_reply_is_cut_at_its_wall_clock_limit(ccm):
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "ccm-tui" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    # a reply cap far away (minutes of pieces, one every 0.05 s): the clock ends this reply first
    config.write_text("reply_max_seconds = 1\nreply_max_tokens = 4000\n", encoding="utf-8")
    ccm.server.stream_delay = 0.05
    ccm.server.push(endless("drip"))
    out = ccm.send("tell me everything")
    assert out.get("cut") is True
    said = [b for b in out["banners"] if "reply_max_seconds" in b]
    assert len(said) == 1 and "cut after 1 s" in said[0] and "\n" not in said[0]
    assert out["reply"].startswith("drip0 drip1")
    logged = [m for m in ccm.lines("raw.jsonl") if m.get("role") == "assistant"]
    assert logged and logged[-1]["content"] == out["reply"] and logged[-1].get("cut") is True
    assert ccm.server.endless_ended.wait(10)  # the stream was let go, not read on in the background
