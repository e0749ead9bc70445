"""What the core needs from a chat model, and what a model call returns.

The litellm client (:mod:`.llm`), the offline demo's scripted model, the
replay's transcript model and restore's metered wrapper all implement
:class:`ChatModel`, so turns, summaries, compaction and imports run through
exactly the same code whichever model answers. Callers never probe for
attributes: everything they may ask is declared here.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

OnDelta = Callable[[str], Awaitable[None] | None]


@dataclass
class ToolCall:
    id: str
    name: str
    arguments: str  # raw JSON text as the model produced it

    def as_message_part(self) -> dict[str, Any]:
        return {"id": self.id, "type": "function", "function": {"name": self.name, "arguments": self.arguments}}


@dataclass
class Completion:
    content: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=dict)
    finish_reason: str | None = None


@runtime_checkable
class ChatModel(Protocol):
    """A chat model as the core uses it.

    ``model`` names it (litellm id) and ``api_base`` says where it is served
    (None: the provider's default, or in-process). ``loaded`` is False while
    its client library still has to be imported; ``load()`` does that (seconds,
    blocking: call it in a thread).

    Every request method raises only these (callers catch nothing else):

    Raises:
        LLMError: the provider failed, refused or cut the reply short (``kind`` is a
            :class:`~.provider_errors.ProviderFailure`; ``partial`` holds what streamed before a cut).
        asyncio.CancelledError: the turn was cancelled (Escape); nothing is retried.
    """

    model: str

    @property
    def api_base(self) -> str | None: ...

    @property
    def loaded(self) -> bool: ...

    def load(self) -> None: ...

    async def stream_chat(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, on_delta: OnDelta | None = None
    ) -> Completion:
        """One chat request; text is reported through ``on_delta`` as it arrives.

        Raises:
            LLMError: as the class says; an exception raised by ``on_delta`` ends the request as it
                was raised.
        """
        ...

    async def complete(
        self, messages: list[dict[str, Any]], *, max_tokens: int | None = None, summary: bool = True
    ) -> Completion:
        """One non-streamed request without tools (summaries, checkpoints); ``summary`` picks the
        summary model where one is configured.

        Raises:
            LLMError: as the class says.
        """
        ...

    async def chat_once(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> Completion:
        """One non-streamed request with tools, on the summary model (restore's evidence loop).

        Raises:
            LLMError: as the class says.
        """
        ...


class InProcessChatModel(ABC):
    """Base of the models that answer in this process (the demo's, the replay's): nothing to
    load, nowhere to connect. Subclasses write :meth:`stream_chat` and :meth:`complete`."""

    model: str = "in-process"

    @property
    def api_base(self) -> str | None:
        return None

    @property
    def loaded(self) -> bool:
        return True

    def load(self) -> None:
        return None

    @abstractmethod
    async def stream_chat(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, on_delta: OnDelta | None = None
    ) -> Completion:
        """As :meth:`ChatModel.stream_chat`."""

    @abstractmethod
    async def complete(
        self, messages: list[dict[str, Any]], *, max_tokens: int | None = None, summary: bool = True
    ) -> Completion:
        """As :meth:`ChatModel.complete`."""

    async def chat_once(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> Completion:
        return await self.stream_chat(messages, tools)
