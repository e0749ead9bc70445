"""The offline extractive summarizer: within the cap, keeps key terms, deterministic."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ccm_tui.core.efforts.summaries import transcript_text
from ccm_tui.core.text.extractive import key_terms, split_messages, summarize
from ccm_tui.core.text.tokens import TokenCounter

COUNTER = TokenCounter()

LOG = [
    {
        "role": "user",
        "content": "Login fails with a 401 after the token refresh in src/auth/refresh.py. Can you find why?",
    },
    {
        "role": "assistant",
        "content": (
            "The TokenRefresher class stores the new access token but the session cookie keeps the old one. "
            "In src/auth/refresh.py the refresh handler returns before calling save_session, so every request after "
            "a refresh sends the expired token and the API answers 401.\n\n```python\ndef refresh(self):\n    return tok\n```\n\n"
            "I moved the save_session call before the return and added a test."
        ),
    },
    {"role": "user", "content": "Tests pass now. Which version of requests do we pin?"},
    {
        "role": "assistant",
        "content": (
            "We pin requests 2.31.0 in requirements.txt; the 401 bug was not related to the library. "
            "The fix is in commit a1b2c3 and the login flow works again after a token refresh."
        ),
    },
]
BODY = "Effort: auth-401\n\n" + transcript_text(LOG)


def test_respects_the_cap_and_keeps_key_terms():
    text = summarize(BODY, 120, COUNTER)
    assert COUNTER.count_text(text) <= 120
    assert text.startswith("auth-401: ")
    for term in ("src/auth/refresh.py", "TokenRefresher", "save_session", "2.31.0"):
        assert term in text, term
    assert "401" in text
    assert "def refresh" not in text  # code blocks are not sentences


def test_the_opening_request_leads():
    text = summarize(BODY, 150, COUNTER)
    assert "Login fails with a 401" in text.split(". ")[0]


def test_deterministic_and_a_tiny_cap_still_holds():
    assert summarize(BODY, 150, COUNTER) == summarize(BODY, 150, COUNTER)
    assert COUNTER.count_text(summarize(BODY, 16, COUNTER)) <= 16


def test_empty_and_code_only_bodies():
    assert summarize("Effort: x\n\n", 50, COUNTER).startswith("x: ")
    text = summarize("USER: ```\nprint(1)\n```", 50, COUNTER)
    assert COUNTER.count_text(text) <= 50


def test_part_summaries_are_merged_without_repeating_the_title():
    body = (
        "Effort: db\n\nSummaries of consecutive parts of one conversation:\n\n"
        "Part 1: db: The sqlite adapter opens ecommerce.db relative to the server. Key terms: db_url.\n\n"
        "Part 2: db: The health endpoint now returns sqlite:// URLs only. Key terms: normalize_to_url."
    )
    text = summarize(body, 100, COUNTER)
    assert text.count("db: ") == 1 and text.count("Key terms") <= 1
    assert "ecommerce.db" in text and "normalize_to_url" in text


def test_split_messages_reads_the_core_prompt_body():
    title, messages = split_messages(BODY)
    assert title == "auth-401"
    assert [r for r, _ in messages] == ["user", "assistant", "user", "assistant"]


def test_key_terms_find_identifiers():
    terms = key_terms("Edit src/app/main.py and config.yaml; CamelCase and snake_case_name; v1.2.3; `make test`")
    for t in ("src/app/main.py", "config.yaml", "CamelCase", "snake_case_name", "v1.2.3", "make test"):
        assert t in terms


@settings(max_examples=40, deadline=None)
@given(st.text(max_size=2000), st.integers(min_value=16, max_value=300))
def test_never_over_the_cap(body, cap):
    assert COUNTER.count_text(summarize(body, cap, COUNTER)) <= cap
