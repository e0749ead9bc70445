"""Hostile model text never reaches the terminal with its control sequences (issue 25, item 1)."""

from __future__ import annotations

import json

from ccm_tui.core.text.terminal import MAX_HELD, StreamCleaner, clean_name, json_safe, terminal_safe
from tests.helpers.openai_server import call, text, tool_calls

CLIPBOARD = "\x1b]52;c;ZXZpbA==\x07"
TITLE = "\x1b]0;PWNED\x07"
CLEAR = "\x1b[2J"
HOSTILE = f"hello {TITLE}{CLIPBOARD}{CLEAR}wor\x00ld\x9b2J\x7f\r\nnext\tline"
CONTROLS = [chr(c) for c in (*range(0, 9), *range(11, 32), *range(0x7F, 0xA0))]


def no_controls(output: str) -> bool:
    return not any(c in output for c in CONTROLS)


def test_terminal_safe_drops_sequences_and_controls_and_keeps_lines_and_tabs():
    assert terminal_safe(HOSTILE) == "hello world\nnext\tline"
    assert terminal_safe("plain\ttext\n") == "plain\ttext\n"
    assert terminal_safe("half \x1b") == "half "  # a sequence cut by a stream delta: no ESC survives
    cleaner = StreamCleaner()
    assert [cleaner.feed(p) for p in ("a\x1b]52;c;", "ZXZp", "bA==\x07b\x1b", "[2Jc")] == ["a", "", "b", "c"]
    stream = "\x1b]0;" + "x" * 5000  # never terminated: held back at most MAX_HELD characters
    shown = [cleaner.feed(stream[i : i + 100]) for i in range(0, len(stream), 100)]
    assert max(len(cleaner.held), len(cleaner.flush())) <= MAX_HELD and "]0;" not in "".join(shown)
    assert clean_name(f"trip\n{TITLE} plan") == "trip plan"
    assert json.loads(json_safe(json.dumps("a\x9bb\x7f", ensure_ascii=False))) == "a\x9bb\x7f"
    assert no_controls(json_safe(json.dumps("a\x9bb\x7f", ensure_ascii=False)))


def test_send_streams_a_hostile_reply_without_its_control_sequences(ccm):
    ccm.server.push(text(HOSTILE))
    rc, out, err = ccm.run(*ccm.send_argv("hi"))
    assert rc == 0, err
    assert "hello world" in out and "next\tline" in out
    assert no_controls(out) and no_controls(err)
    assert HOSTILE in ccm.lines("raw.jsonl")[-1]["content"]  # the log keeps what the model said


def test_an_effort_name_is_cleaned_when_stored_and_status_search_and_json_print_no_controls(ccm):
    ccm.server.push(tool_calls(call("open_effort", {"name": f"trip{CLIPBOARD}{CLEAR}\nplan"})), text(HOSTILE))
    out = ccm.send("plan a trip")
    assert out["active_effort"] == "trip-plan"
    assert ccm.effort("trip-plan")["name"] == "trip plan"
    for argv in (("status",), ("search", "hello"), ("search", "--json", "hello"), ("status", "--json")):
        rc, printed, err = ccm.run(argv[0], "--session-dir", str(ccm.dir), *argv[1:])
        assert rc == 0, err
        assert no_controls(printed), (argv, printed)
