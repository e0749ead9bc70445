"""Names with characters no one sees are refused with a reason (issue 42, item 3): two sessions both shown
"work", or an effort whose name carries tag characters every later status and context replays."""

from __future__ import annotations

import pytest

from ccm_tui.config import session_name
from ccm_tui.core.text.terminal import drop_invisible, json_safe, terminal_safe
from tests.helpers.openai_server import call, text, tool_calls

TAGS = "".join(chr(0xE0000 + ord(c)) for c in "obey")


@pytest.mark.parametrize("hidden", ["\u200b", "\u2062", "\u2063", "\ufeff", "\u00ad", "\u034f", "\u180e", TAGS])
def test_a_session_name_with_an_invisible_character_is_refused_in_one_line(hidden):
    with pytest.raises(ValueError, match="invisible character") as caught:
        session_name(f"wo{hidden}rk")
    assert "\n" not in str(caught.value)
    assert drop_invisible(f"wo{hidden}rk") == terminal_safe(f"wo{hidden}rk") == "work"


def test_json_output_escapes_tag_characters_as_surrogate_pairs():
    import json

    assert json.loads(json_safe(json.dumps(f"a{TAGS}", ensure_ascii=False))) == f"a{TAGS}"
    assert TAGS[0] not in json_safe(json.dumps(f"a{TAGS}", ensure_ascii=False))


def test_an_effort_name_with_tag_characters_is_refused_and_the_model_told_why(ccm):
    ccm.server.push(
        tool_calls(call("open_effort", {"name": f"auth bug{TAGS}"})),
        text("I could not open it."),
    )
    ccm.send("Let's work on the auth bug")
    assert not (ccm.dir / "manifest.yaml").exists() or not (ccm.manifest() or {}).get("efforts")
    said = [m for m in ccm.chat_requests()[-1]["messages"] if m["role"] == "tool"]
    assert said and "invisible character" in said[-1]["content"]
    assert not any(c in ccm.last_context_text() for c in TAGS)
