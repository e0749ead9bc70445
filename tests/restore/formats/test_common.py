"""The turn builder and file-name bookkeeping shared by all parsers."""

from __future__ import annotations

from ccm_tui.restore.formats._common import FileNames, TurnBuilder, clean_path, split_lines


def test_split_lines_keeps_numbering_and_drops_carriage_returns() -> None:
    assert split_lines("a\r\nb\n\nc\rd") == ["a", "b", "", "c\rd"]


def test_clean_path_trims_quotes_and_punctuation() -> None:
    assert clean_path(' "`src/app.py`". ') == "src/app.py"
    assert clean_path("``") is None


def test_each_user_message_is_a_turn_also_without_an_answer_between() -> None:
    builder = TurnBuilder()
    builder.user("first", 1)
    builder.user("first, sent again", 2)
    builder.agent("answer", 3, 5)
    builder.user("third", 6)

    parsed = builder.result("test")

    assert [(t.turn, t.user_messages, t.start_line, t.end_line) for t in parsed.turns] == [
        (1, ["first"], 1, 1),
        (2, ["first, sent again"], 2, 5),
        (3, ["third"], 6, 6),
    ]


def test_joined_text_is_part_of_the_request_before_it() -> None:
    builder = TurnBuilder()
    builder.join("an image", 1)
    builder.join("and its caption", 2)
    builder.agent("answer", 3)

    parsed = builder.result("test")

    assert [(t.user_messages, t.end_line) for t in parsed.turns] == [(["an image", "and its caption"], 3)]


def test_output_before_the_first_user_message_is_noted() -> None:
    builder = TurnBuilder()
    builder.agent("welcome", 1, 3)
    builder.agent("banner", 5, 7)
    builder.artifact("a.py", "read", 8)
    builder.user("hi", 9)

    parsed = builder.result("test")

    assert parsed.skipped == ["lines 1-7: text before the first user message"]
    assert parsed.turns[0].artifacts == []


def test_artifacts_are_deduplicated_and_creation_of_a_known_file_is_an_edit() -> None:
    builder = TurnBuilder()
    builder.user("go", 1)
    builder.artifact("src/new.py", "created", 2)
    builder.artifact("src/new.py", "edited", 3)
    builder.artifact("src/new.py", "created", 4)
    builder.artifact("/repo/src/a.py", "read", 5)
    builder.artifact("src\\a.py", "read", 6)
    builder.agent("done", 7)
    builder.user("again", 8)
    builder.artifact("src/new.py", "created", 9)

    turns = builder.result("test").turns

    assert [(a.path, a.action, a.line) for a in turns[0].artifacts] == [
        ("src/new.py", "created", 2),
        ("/repo/src/a.py", "read", 5),
    ]
    assert [(a.path, a.action) for a in turns[1].artifacts] == [("src/new.py", "edited")]


def test_file_names_match_relative_and_absolute_spellings() -> None:
    names = FileNames()

    assert names.spelling_of("app/styles/app.css") == ("app/styles/app.css", False)
    assert names.spelling_of("C:\\work\\app\\styles\\app.css") == ("app/styles/app.css", True)
    assert names.spelling_of("./app/styles/app.css") == ("app/styles/app.css", True)
    assert names.spelling_of("other/styles/app.css") == ("other/styles/app.css", False)
    assert names.spelling_of("styles/app.css") == ("app/styles/app.css", True)


def test_a_bare_slash_command_is_not_a_turn() -> None:
    builder = TurnBuilder()
    builder.user("/compact", 4)
    builder.user("/review the parser changes", 6)

    parsed = builder.result("test")

    assert [turn.user for turn in parsed.turns] == ["/review the parser changes"]
    assert parsed.skipped == ["line 4: slash command /compact"]
