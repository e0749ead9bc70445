"""Token counting with tiktoken, offline, cached per message.

tiktoken downloads its encodings on first use; litellm ships the cl100k and
o200k files, so when ``TIKTOKEN_CACHE_DIR`` is unset we point it there before
tiktoken loads anything. Counting is cached by message identity and content,
so the cost of a turn does not grow with history.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from ...config import prepare_offline_libraries

# Per-message framing overhead of the chat format (OpenAI's published rule of thumb).
MESSAGE_OVERHEAD = 4
REPLY_PRIMING = 3
FALLBACK_ENCODING = "cl100k_base"
ENCODINGS = ("cl100k_base", "o200k_base")  # the ones a model is counted with (encoding_name_for_model)
MAX_TOKEN_CHARS = 128  # no token of tiktoken's encodings is longer (in bytes): n characters are ≥ n/128 tokens
EXACT_CHARS = 1_000_000  # a text this long is counted exactly for a figure; a longer one is estimated …
SAMPLE_CHARS = 64_000  # … from the rate of its first characters (a 60 MB message costs a 64 KB count)
ROUGH_TOKEN_CHARS = 3  # a rough counter's characters per token (fewer than prose or code average: it errs high)


def encoding_name_for_model(model: str | None) -> str:
    """o200k for the 4o/4.1/o-series/gpt-5 families, cl100k otherwise (a close estimate for
    non-OpenAI models, whose tokenizers tiktoken does not ship)."""
    name = (model or "").lower().rsplit("/", 1)[-1]
    if name.startswith(("gpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "o1", "o3", "o4", "chatgpt-4o", "gpt-oss")):
        return "o200k_base"
    return FALLBACK_ENCODING


@lru_cache(maxsize=4)
def _encoding(name: str):
    prepare_offline_libraries()  # tiktoken reads litellm's bundled encodings, offline
    import tiktoken

    try:
        return tiktoken.get_encoding(name)
    except Exception:
        if name != FALLBACK_ENCODING:
            return _encoding(FALLBACK_ENCODING)
        raise


class TokenCounter:
    """Counts tokens of texts and chat messages for one model, with a bounded cache."""

    def __init__(self, model: str | None = None, cache_size: int = 200_000, *, encoding: str | None = None) -> None:
        """``encoding``: count with it whatever the model (a session read with the encoding its
        writer counted with, so that every reader shows the same figures)."""
        self.encoding_name = encoding if encoding in ENCODINGS else encoding_name_for_model(model)
        self._cache: OrderedDict[str, int] = OrderedDict()
        self._cache_size = cache_size

    @property
    def encoding(self):
        return _encoding(self.encoding_name)

    rough = False  # figures only, never a request: a text counted as ceil(len / ROUGH_TOKEN_CHARS), no encoding

    def count_text(self, text: str) -> int:
        if not text:
            return 0
        if self.rough:
            return -(-len(text) // ROUGH_TOKEN_CHARS)
        cached = self._cache.get(text)
        if cached is not None:
            self._cache.move_to_end(text)
            return cached
        n = len(self.encoding.encode(text, disallowed_special=()))
        self._cache[text] = n
        if len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return n

    def within(self, text: str, cap: int) -> bool:
        """Whether ``text`` is at most ``cap`` tokens — a text too long for that whatever its tokens
        (more than ``cap * MAX_TOKEN_CHARS`` characters) is not encoded."""
        return len(text) <= cap * MAX_TOKEN_CHARS and self.count_text(text) <= cap

    def estimate_text(self, text: str) -> int:
        """Tokens of ``text`` for a figure (what a whole raw log would cost): exact up to EXACT_CHARS,
        beyond that the rate of its first SAMPLE_CHARS characters times its length, so that a huge
        imported message is not encoded whole at every start."""
        if len(text) <= EXACT_CHARS:
            return self.count_text(text)
        sample = text[:SAMPLE_CHARS]
        return max(len(text) // MAX_TOKEN_CHARS, round(self.count_text(sample) * len(text) / len(sample)))

    def count_message(self, message: dict[str, Any], *, estimate: bool = False) -> int:
        """Tokens a chat message costs in a request, including framing and tool calls (``estimate``:
        a huge content estimated, see :meth:`estimate_text` — for figures, never to fit a request)."""
        content = str(message.get("content") or "")
        n = MESSAGE_OVERHEAD + (self.estimate_text(content) if estimate else self.count_text(content))
        for call in message.get("tool_calls") or ():
            fn = call.get("function", {}) if isinstance(call, dict) else {}
            n += self.count_text(str(fn.get("name", ""))) + self.count_text(str(fn.get("arguments", "")))
            n += MESSAGE_OVERHEAD
        if message.get("name"):
            n += 1
        return n

    def count_messages(self, messages: list[dict[str, Any]]) -> int:
        return sum(self.count_message(m) for m in messages) + (REPLY_PRIMING if messages else 0)

    def count_json(self, data: Any) -> int:
        import json

        return self.count_text(json.dumps(data, ensure_ascii=False, separators=(",", ":")))


def keep_head_and_tail(
    text: str, cap: int, counter: TokenCounter, marker: Callable[[int], str], head_share: float = 0.6
) -> tuple[str, int]:
    """``text`` within ``cap`` tokens: its head and tail around ``marker(tokens_left_out)``.

    Returns the text (unchanged when it fits) and how many tokens were left out. The
    result's own count includes the marker, so it really is ≤ ``cap``.
    """
    if len(text) > (cap + 1) * MAX_TOKEN_CHARS:  # surely longer than cap: never encoded whole
        return _ends_of_huge(text, cap, counter, marker, head_share)
    total = counter.count_text(text)
    if total <= cap:
        return text, 0
    enc = counter.encoding
    tokens = enc.encode(text, disallowed_special=())
    keep = max(8, cap - counter.count_text(marker(len(tokens))) - 4)
    while True:
        head_n = int(keep * head_share)
        tail_n = keep - head_n
        head = enc.decode(tokens[:head_n]).rstrip()
        tail = enc.decode(tokens[len(tokens) - tail_n :]).lstrip() if tail_n else ""
        out = f"{head}\n\n{marker(len(tokens) - head_n - tail_n)}\n\n{tail}".rstrip()
        if counter.count_text(out) <= cap or keep <= 8:
            return out, total - counter.count_text(out)
        keep -= 8  # token boundaries can merge differently after decoding; shave and retry


def _end_tokens(enc: Any, text: str, n: int, *, head: bool) -> list[int]:
    """At least ``n + 1`` tokens of one end of ``text`` (longer than ``n * MAX_TOKEN_CHARS``): encoded
    from a piece of about 6 characters a token, four times longer while it holds too few."""
    chars = 6 * (n + 2)
    while True:
        piece = text[:chars] if head else text[-chars:]
        tokens = enc.encode(piece, disallowed_special=())
        if len(tokens) > n + 1 or chars >= (n + 2) * MAX_TOKEN_CHARS:
            return tokens
        chars *= 4


def _ends_of_huge(
    text: str, cap: int, counter: TokenCounter, marker: Callable[[int], str], head_share: float
) -> tuple[str, int]:
    """:func:`keep_head_and_tail` for a text too long to fit whatever its tokens: only its two ends are
    encoded (``cap`` tokens at most each, from ``cap * MAX_TOKEN_CHARS`` characters at most), and the
    tokens left out are estimated (:meth:`TokenCounter.estimate_text`)."""
    enc = counter.encoding
    head_tokens = _end_tokens(enc, text, cap, head=True)
    tail_tokens = _end_tokens(enc, text, cap, head=False)
    total = counter.estimate_text(text)
    keep = max(8, cap - counter.count_text(marker(total)) - 4)
    while True:
        head_n = int(keep * head_share)
        tail_n = keep - head_n
        head = enc.decode(head_tokens[:head_n]).rstrip()
        tail = enc.decode(tail_tokens[len(tail_tokens) - tail_n :]).lstrip() if tail_n else ""
        out = f"{head}\n\n{marker(max(0, total - head_n - tail_n))}\n\n{tail}".rstrip()
        kept = counter.count_text(out)
        if kept <= cap or keep <= 8:
            return out, max(0, total - kept)
        keep -= 8


def cap_tokens(text: str, max_tokens: int, counter: TokenCounter) -> str:
    """Trim text to at most ``max_tokens``, preferring a sentence boundary."""
    text = " ".join(text.split())
    if counter.count_text(text) <= max_tokens:
        return text
    tokens = counter.encoding.encode(text, disallowed_special=())
    cut = counter.encoding.decode(tokens[: max(1, max_tokens - 1)])
    boundary = max(cut.rfind(". "), cut.rfind("! "), cut.rfind("? "))
    if boundary > len(cut) // 2:
        return cut[: boundary + 1]
    return cut.rstrip() + "…"
