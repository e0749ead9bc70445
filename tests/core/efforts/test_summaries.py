"""A summary reads a message within reason: one huge message (a pasted log, a file an agent printed) went
to the summary model whole, and through the offline summary's sentence scoring whole (issue 33, hole 2)."""

from __future__ import annotations

from ccm_tui.core.efforts.summaries import MESSAGE_CHARS, offline_summary, summarize_messages, transcript_text
from ccm_tui.core.text.tokens import TokenCounter
from tests.helpers.openai_server import FakeLLMServer, text
from tests.helpers.sessionkit import llm_for

HUGE = "The build log says: " + "linker warning about unused symbol frobnicate. " * 400_000  # ~19 MB


def messages() -> list[dict[str, str]]:
    return [
        {"role": "user", "content": "why does the release build fail?"},
        {"role": "assistant", "content": HUGE + " Final line: the error is a missing libfoo."},
        {"role": "user", "content": "thanks, adding libfoo fixed it"},
    ]


def test_a_huge_message_keeps_its_head_and_tail_and_says_what_was_cut():
    said = transcript_text(messages())
    assert len(said) < MESSAGE_CHARS + 1_000
    assert "The build log says" in said and "the error is a missing libfoo" in said
    assert "characters cut for the summary" in said and "thanks, adding libfoo" in said


async def test_the_summary_model_gets_the_huge_message_cut(llm_server: FakeLLMServer):
    llm_server.push(text("Release build failed for a missing libfoo; adding it fixed it."))
    summary = await summarize_messages(llm_for(llm_server), messages(), counter=TokenCounter("gpt-4o"))
    assert "libfoo" in summary
    (request,) = llm_server.chat_requests()  # one call: the cut message fits one chunk
    body = request["messages"][-1]["content"]
    assert len(body) < MESSAGE_CHARS + 2_000 and "missing libfoo" in body and "characters cut" in body


def test_the_offline_summary_reads_the_cut_message():
    summary = offline_summary(messages(), counter=TokenCounter("gpt-4o"), max_tokens=60)
    assert "libfoo" in summary and "characters cut" not in summary
