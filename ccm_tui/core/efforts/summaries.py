"""Summaries of efforts (on conclusion) and checkpoints of open efforts (on compaction).

A summary is made from the WHOLE raw log with a separate model call (the
summary model, which may be cheaper than the chat model). Logs larger than
what one call can take are summarized in chunks first, then the chunk
summaries are summarized. The result is capped at the configured size.
"""

from __future__ import annotations

from typing import Any

from ... import paths
from ..models.interface import ChatModel
from ..models.litellm_client import LLMError
from ..models.provider_errors import ProviderFailure
from ..session.chat_line import note_author
from ..text.extractive import summarize
from ..text.tokens import TokenCounter, cap_tokens

# How much raw log one summary request may carry.
CHUNK_TOKENS = 12_000
MESSAGE_CHARS = 40_000  # of one message, at most, in a summary's prompt (head and tail; about 10,000 tokens)


def within_reason(content: str, *, say_cut: bool = True) -> str:
    """A message as a summary reads it: one longer than :data:`MESSAGE_CHARS` (a pasted log, a whole
    file an agent printed) keeps its head and its tail around a line saying how much was cut, so one
    60 MB message neither goes to the model whole nor costs the offline summary seconds (which is
    not told: it would quote the line)."""
    if len(content) <= MESSAGE_CHARS:
        return content
    head, tail = MESSAGE_CHARS * 3 // 4, MESSAGE_CHARS // 4
    cut = len(content) - head - tail
    said = f"\n[… {cut:,} characters cut for the summary …]\n" if say_cut else "\n\n"
    return f"{content[:head]}{said}{content[-tail:]}"


def transcript_text(messages: list[dict[str, Any]], *, say_cut: bool = True) -> str:
    """A plain-text rendering of log lines for a summarizer prompt (long messages cut: :func:`within_reason`)."""
    lines = []
    for m in messages:
        role = m.get("role", "?")
        content = within_reason(str(m.get("content") or ""), say_cut=say_cut).strip()
        if content and (author := note_author(m)) is not None:  # an agent's note, not the user's words
            lines.append(f"NOTE (left by {author} via ccm-tui mcp): {content}")
        elif content:
            lines.append(f"{role.upper()}: {content}")
    return "\n\n".join(lines)


def _chunks(messages: list[dict[str, Any]], counter: TokenCounter, limit: int) -> list[list[dict[str, Any]]]:
    chunks: list[list[dict[str, Any]]] = [[]]
    size = 0
    for m in messages:
        content = m.get("content")
        n = counter.count_message(m | {"content": within_reason(content)} if isinstance(content, str) else m)
        if chunks[-1] and size + n > limit:
            chunks.append([])
            size = 0
        chunks[-1].append(m)
        size += n
    return [c for c in chunks if c]


async def _summarize_text(llm: ChatModel, instructions: str, body: str, max_tokens: int) -> str:
    messages = [
        {"role": "system", "content": instructions},
        {"role": "user", "content": body},
    ]
    completion = await llm.complete(messages, max_tokens=max_tokens * 2)
    text = completion.content.strip()
    if not text:
        raise LLMError(ProviderFailure.OTHER, "the summary model returned an empty summary")
    return text


def _instructions(kind: str, max_tokens: int) -> str:
    max_words = max(20, int(max_tokens * 0.7))
    return paths.prompt(kind).replace("{max_words}", str(max_words))


async def summarize_messages(
    llm: ChatModel,
    messages: list[dict[str, Any]],
    *,
    counter: TokenCounter,
    max_tokens: int = 150,
    kind: str = "summarize",
    title: str = "",
) -> str:
    """Summarize log lines (all of them) into at most ``max_tokens`` tokens."""
    instructions = _instructions(kind, max_tokens)
    header = f"Effort: {title}\n\n" if title else ""
    chunks = _chunks(messages, counter, CHUNK_TOKENS)
    if not chunks:
        return "(empty effort: nothing was discussed)"
    if len(chunks) == 1:
        text = await _summarize_text(llm, instructions, header + transcript_text(chunks[0]), max_tokens)
        return cap_tokens(text, max_tokens, counter)
    partials = []
    for i, chunk in enumerate(chunks, 1):
        body = f"{header}Part {i} of {len(chunks)} of the conversation:\n\n{transcript_text(chunk)}"
        partials.append(await _summarize_text(llm, instructions, body, max_tokens))
    combined = "\n\n".join(f"Part {i}: {p}" for i, p in enumerate(partials, 1))
    text = await _summarize_text(
        llm, instructions, f"{header}Summaries of consecutive parts of one conversation:\n\n{combined}", max_tokens
    )
    return cap_tokens(text, max_tokens, counter)


def offline_summary(
    messages: list[dict[str, Any]], *, counter: TokenCounter, max_tokens: int = 150, title: str = ""
) -> str:
    """An extractive summary of log lines, written without a model (its most informative sentences
    and key terms, within ``max_tokens``): when the summary model is missing or fails."""
    if not any(str(m.get("content") or "").strip() for m in messages):
        return "(empty effort: nothing was discussed)"
    header = f"Effort: {title}\n\n" if title else ""
    return summarize(header + transcript_text(messages, say_cut=False), max_tokens, counter, title=title or None)
