"""What one model request reports while it waits, so that a status line can follow the turn."""

from __future__ import annotations

from typing import Any

from ccm_tui.config import Settings
from ccm_tui.core.models.interface import Completion, InProcessChatModel
from ccm_tui.core.models.provider_errors import TRANSIENT, LLMError
from ccm_tui.core.turn import events as te
from ccm_tui.core.turn._model_requests import LOADING_CLIENT, ModelCalls


class ColdFlakyModel(InProcessChatModel):
    """Not loaded yet, and its first request fails with a provider hiccup."""

    model = "openai/flaky"

    def __init__(self) -> None:
        self._loaded = False
        self.failures = 1

    @property
    def loaded(self) -> bool:
        return self._loaded

    def load(self) -> None:
        self._loaded = True

    async def stream_chat(self, messages, tools, on_delta=None) -> Completion:
        if self.failures:
            self.failures -= 1
            raise LLMError(TRANSIENT, "provider error 503")
        return Completion(content="hello")

    async def complete(self, messages, *, max_tokens=None, summary=True) -> Completion:
        return await self.stream_chat(messages, None)


async def test_a_cold_start_then_a_retry_say_when_each_wait_ends():
    events: list[te.TurnEvent] = []

    async def no_sleep(_: float) -> Any:
        return None

    calls = ModelCalls(None, Settings(model="openai/flaky"), ColdFlakyModel(), retry_base=0.0, sleep=no_sleep)  # type: ignore[arg-type]
    completion = await calls.call([{"role": "user", "content": "hi"}], None, None, 1, events.append, [])
    assert completion is not None and completion.content == "hello"
    kinds = [(type(e).__name__, getattr(e, "cause", getattr(e, "attempt", None))) for e in events]
    assert kinds == [
        ("Waiting", "model"),  # loading the client …
        ("Asking", 1),  # … is over: the model is asked
        ("Banner", None),  # provider hiccup (…); retrying in 0.0 s
        ("Waiting", "retry"),
        ("Asking", 2),
    ]
    assert isinstance(events[0], te.Waiting) and events[0].reason == LOADING_CLIENT
