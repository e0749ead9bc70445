"""Words (``core/text/words.py``): the one tokenizer family and the named word sets."""

from __future__ import annotations

from ccm_tui.core.text.words import (
    CHAT_FILLER_WORDS,
    COMMON_WORDS,
    FUNCTION_WORDS,
    KEYWORD_STOP_WORDS,
    SUMMARY_WORDS,
    content_words,
    is_control_word,
    words,
    written_words,
)


def test_the_search_function_words_are_lucenes_classic_set_and_the_question_words_word_for_word():
    """Search ranking and the search benchmarks' figures depend on this set: any change is a ranking change."""
    lucene = "a an and are as at be but by for if in into is it no not of on or such that the their then there"
    lucene += " these they this to was will with"
    assert sorted(FUNCTION_WORDS) == sorted(lucene.split() + "what when where which who whom whose why how".split())


def test_words_are_runs_of_letters_and_digits_in_any_script():
    assert words("Fix the auth-bug #2, don't re_run it") == [
        "fix",
        "the",
        "auth",
        "bug",
        "2",
        "don",
        "t",
        "re",
        "run",
        "it",
    ]
    assert words("Ünïcode ДОМ 日本語") == ["ünïcode", "дом", "日本語"]
    assert words("") == [] and words(None) == []  # type: ignore[arg-type]


def test_written_words_keep_inner_apostrophes_and_hyphens_and_start_with_a_letter():
    assert list(written_words("Don't re-run it, 3rd 'quoted' x2 -dash-")) == [
        "don't",
        "re-run",
        "it",
        "rd",
        "quoted",
        "x2",
        "dash",
    ]


def test_content_words_leave_out_filler_and_short_words_and_strip_plurals():
    assert content_words("I'm fixing the flaky tests in the parser modules") == ["flaky", "test", "parser", "module"]
    assert content_words("ok thanks, that's great") == []


def test_control_words_are_read_without_case_or_accents():
    assert is_control_word("Terminé") and is_control_word("CONCLUDED") and is_control_word("weiter")
    assert not is_control_word("parser")


def test_each_set_is_lower_case_single_words():
    for name, found in {
        "FUNCTION_WORDS": FUNCTION_WORDS,
        "COMMON_WORDS": COMMON_WORDS,
        "KEYWORD_STOP_WORDS": KEYWORD_STOP_WORDS,
        "CHAT_FILLER_WORDS": CHAT_FILLER_WORDS,
    }.items():
        assert [w for w in found if w != w.lower() or not w or " " in w] == [], name


def test_the_sets_nest_function_words_inside_common_words_inside_keyword_stop_words():
    assert FUNCTION_WORDS < COMMON_WORDS < KEYWORD_STOP_WORDS == COMMON_WORDS | SUMMARY_WORDS


def test_everyday_words_are_neither_recalled_by_nor_summary_keywords():
    from ccm_tui.core.efforts.salience import salient_keywords
    from ccm_tui.core.search._rare_words import candidate_words

    assert salient_keywords("The user asked today for a good long plan for the garden beds") == {
        "plan",
        "garden",
        "beds",
    }
    assert candidate_words("how long should herself wait without the pgbouncer") == ["pgbouncer"]
