"""Captured terminal output (``script``, tmux logs, terminal copies) made plain text: ``captured_text``."""

from __future__ import annotations

from ccm_tui.core.text.terminal import captured_text, resolve_overwrites, terminal_safe


def test_removes_csi_colour_and_cursor_sequences() -> None:
    assert captured_text("\x1b[1;32mok\x1b[0m \x1b[2K\x1b[?25lbar\x1b[10;4H") == "ok bar"


def test_removes_osc_sequences_ended_by_bel_or_st() -> None:
    assert captured_text("\x1b]0;title\x07a\x1b]8;;https://x.y\x1b\\link\x1b]8;;\x1b\\") == "alink"


def test_removes_charset_and_short_escapes() -> None:
    assert captured_text("\x1b(B\x1b=\x1b7text\x1b8") == "text"


def test_removes_eight_bit_sequences_and_c1_controls() -> None:
    """In a capture a C1 character was the terminal's control (CSI 0x9b, OSC 0x9d, NEL 0x85 …), never text."""
    assert captured_text("\x9b1mbold\x9b0m \x9d0;title\x9cdone\x85") == "bold done"


def test_carriage_return_keeps_the_last_overwrite() -> None:
    assert captured_text("⠋ Generating...\r⠙ Generating...\r\x1b[2KDone") == "Done"
    assert resolve_overwrites("50%\r100%\r   ") == "100%"


def test_crlf_is_a_line_break_and_line_count_is_kept() -> None:
    text = "one\r\ntwo\r\n\x1b[31mthree\x1b[0m\r\n"

    assert captured_text(text) == "one\ntwo\nthree\n"


def test_a_string_left_open_does_not_swallow_the_lines_after_it() -> None:
    assert captured_text("\x1b]0;title never ended\nsecond\nthird") == "\nsecond\nthird"


def test_plain_text_is_unchanged_except_control_characters() -> None:
    assert captured_text("tab\tand ┃ box\n\x07bell") == "tab\tand ┃ box\nbell"
    assert captured_text("plain words") == "plain words"


def test_bidirectional_marks_stay_in_the_text_and_only_the_screen_drops_them() -> None:
    hebrew = "שלום\u200f (v2)"
    assert captured_text(f"\x1b[1m{hebrew}\x1b[0m") == hebrew
    assert terminal_safe(hebrew) == "שלום (v2)"
