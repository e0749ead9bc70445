"""Stripping terminal escape sequences from captured logs."""

from __future__ import annotations

from ccm_tui.restore.ansi import strip_ansi


def test_removes_csi_colour_and_cursor_sequences() -> None:
    assert strip_ansi("\x1b[1;32mok\x1b[0m \x1b[2K\x1b[?25lbar\x1b[10;4H") == "ok bar"


def test_removes_osc_sequences_ended_by_bel_or_st() -> None:
    assert strip_ansi("\x1b]0;title\x07a\x1b]8;;https://x.y\x1b\\link\x1b]8;;\x1b\\") == "alink"


def test_removes_charset_and_short_escapes() -> None:
    assert strip_ansi("\x1b(B\x1b=\x1b7text\x1b8") == "text"


def test_carriage_return_keeps_the_last_overwrite() -> None:
    assert strip_ansi("⠋ Generating...\r⠙ Generating...\r\x1b[2KDone") == "Done"


def test_crlf_is_a_line_break_and_line_count_is_kept() -> None:
    text = "one\r\ntwo\r\n\x1b[31mthree\x1b[0m\r\n"

    assert strip_ansi(text) == "one\ntwo\nthree\n"


def test_plain_text_is_unchanged_except_control_characters() -> None:
    assert strip_ansi("tab\tand ┃ box\n\x07bell") == "tab\tand ┃ box\nbell"
