"""Slash commands: parsing, errors in one line, completion, help."""

from __future__ import annotations

import pytest

from ccm_tui.core.service.run_state import SendMessage, SlashCommand
from ccm_tui.core.service.slash_commands import COMMANDS, SlashError, completions, help_text, parse


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("/open Japan trip", SlashCommand("open", "Japan trip")),
        ("  /open   Japan    trip  ", SlashCommand("open", "Japan trip")),
        ("/done", SlashCommand("conclude", "")),
        ("/conclude japan-trip", SlashCommand("conclude", "japan-trip")),
        ("/SEARCH locker code", SlashCommand("search", "locker code")),
        ("/status", SlashCommand("status", "")),
        ("//open is a word", SendMessage("/open is a word")),
        ("hello /open", SendMessage("hello /open")),
        ("/", SendMessage("/")),
    ],
)
def test_parse(typed, expected):
    assert parse(typed) == expected


@pytest.mark.parametrize(
    ("typed", "says"),
    [
        ("/frobnicate", "unknown command /frobnicate"),
        ("/open", "/open needs a name"),
        ("/reopen   ", "/reopen needs an effort id"),
        ("/search", "/search needs something to look for"),
        ("/status now", "/status takes nothing after it"),
    ],
)
def test_a_bad_command_is_one_line_that_says_why(typed, says):
    with pytest.raises(SlashError) as caught:
        parse(typed)
    assert says in str(caught.value) and "\n" not in str(caught.value)


def test_completion_of_names_and_effort_ids():
    ids = ["japan-trip", "auth-bug", "japan-food"]
    assert completions("/co", ids) == ["/collapse ", "/conclude "]
    assert completions("/d", ids) == ["/done "]
    assert completions("/reopen ja", ids) == ["/reopen japan-food", "/reopen japan-trip"]
    assert completions("/open ja", ids) == []  # a name is new: nothing to complete
    assert completions("hello", ids) == [] and completions("//x", ids) == []


def test_help_lists_every_command():
    text = help_text()
    for spec in COMMANDS:
        assert spec.usage in text
    assert "/done" in text and "//text" in text
