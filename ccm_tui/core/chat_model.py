"""What the core needs from a chat model: the litellm client, the demo's and the replay's models.

Anything with these two coroutines can drive turns, summaries and compaction,
so the offline demo and the replay run through exactly the same orchestrator
as a real provider.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from .llm import Completion

OnDelta = Callable[[str], Any]


@runtime_checkable
class ChatModel(Protocol):
    model: str

    async def stream_chat(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, on_delta: OnDelta | None = None
    ) -> Completion:
        """One chat request; text is reported through ``on_delta`` as it arrives."""
        ...

    async def complete(
        self, messages: list[dict[str, Any]], *, max_tokens: int | None = None, summary: bool = True
    ) -> Completion:
        """One non-streamed request without tools (summaries, checkpoints)."""
        ...
