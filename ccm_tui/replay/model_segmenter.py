"""Effort boundaries from a model: it reads the numbered turn one-liners and names the topics.

The answer is validated like a boundaries file; anything unusable (not JSON,
overlaps, turns out of range, bad names) makes the caller fall back to the
offline segmenter, with the reason reported.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .. import paths
from ..core.efforts.names import slugify
from ..core.models.interface import ChatModel
from .boundaries import BoundaryError, EffortSpan, validate_spans

LINE_CHARS = 160
MAX_ANSWER_TOKENS = 4_000


def one_liners(users: list[str]) -> str:
    lines = []
    for i, text in enumerate(users, 1):
        line = " ".join(text.split())
        if len(line) > LINE_CHARS:
            line = line[: LINE_CHARS - 1] + "…"
        lines.append(f"{i}. {line or '(empty)'}")
    return "\n".join(lines)


def parse_answer(text: str, n_turns: int) -> list[EffortSpan]:
    """Spans from the model's JSON answer; raises BoundaryError when it is unusable."""
    match = re.search(r"\{.*\}", text or "", re.DOTALL)
    if not match:
        raise BoundaryError("the model's answer holds no JSON object")
    try:
        data = json.loads(match.group(0))
    except ValueError as exc:
        raise BoundaryError(f"the model's answer is not valid JSON ({exc})") from None
    items = data.get("efforts") if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise BoundaryError("the model's answer has no 'efforts' list")
    cleaned: list[dict[str, Any]] = []
    taken: set[str] = set()
    for item in items:
        if not isinstance(item, dict):
            raise BoundaryError("an effort in the model's answer is not an object")
        name = str(item.get("id") or item.get("name") or "topic")
        slug = slugify(name)
        base, n = slug, 2
        while slug in taken:
            slug = f"{base[:60]}-{n}"
            n += 1
        taken.add(slug)
        cleaned.append({"id": slug, "first_turn": item.get("first_turn"), "last_turn": item.get("last_turn")})
    return validate_spans(cleaned, n_turns, where="model segmentation")


async def segment_with_model(llm: ChatModel, users: list[str]) -> list[EffortSpan]:
    """Ask ``llm`` (any chat model) to segment; raises BoundaryError or LLMError on failure."""
    n = len(users)
    instructions = paths.prompt("replay_segment").replace("{n_turns}", str(n))
    messages = [
        {"role": "system", "content": instructions},
        {"role": "user", "content": one_liners(users)},
    ]
    completion = await llm.complete(messages, max_tokens=MAX_ANSWER_TOKENS, summary=False)
    return parse_answer(completion.content, n)
