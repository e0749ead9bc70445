"""The replay model: stands in for the chat model, replaying a transcript's own turns.

It has the interface the orchestrator calls (``stream_chat`` and ``complete``,
like :class:`ccm_tui.core.models.litellm_client.LLMClient`), so every replayed turn runs through
the real orchestrator: context assembly, budget and compaction, tool
execution, logging and salience. Per turn the runner sets a :class:`TurnPlan`;
the model then

* first answers with the lifecycle tool calls the boundaries call for
  (``reopen_effort`` / ``open_effort`` at an effort's first turn,
  ``close_effort`` at its last), as real tool calls the orchestrator executes;
* then answers with the transcript's own agent response as the final text.

No model is asked for replies. Summaries and compaction checkpoints
(``complete``) go to the configured model when there is one, else to the
offline extractive summarizer. Either way the concluding turn's reply is part
of what is summarized: in live use the model calls ``close_effort`` *before*
writing its (short) closing reply, but a transcript's closing turn often holds
the resolution, so the replay adds it to the summary request.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .. import paths
from ..core.models.interface import ChatModel, Completion, InProcessChatModel, ToolCall
from ..core.models.provider_errors import LLMError, ProviderFailure
from ..core.text import extractive
from ..core.text.tokens import TokenCounter
from ..errors import CcmError


class ReplayToolError(CcmError, RuntimeError):
    """A lifecycle tool call of the replay came back with an error (a replay bug, not the user's)."""


@dataclass
class TurnPlan:
    turn: int
    user: str  # the text sent, as the orchestrator logs it
    reply: str  # the transcript's reply (capped), the final content
    open: str | None = None
    reopen: str | None = None
    close: bool = False
    aside: bool = False  # route_to_ambient: only meaningful while an effort is open

    def tool_calls(self) -> list[ToolCall]:
        calls = []
        if self.reopen:
            calls.append(("reopen_effort", {"id": self.reopen}))
        elif self.open:
            calls.append(("open_effort", {"name": self.open}))
        if self.aside:
            calls.append(("route_to_ambient", {}))
        if self.close:
            calls.append(("close_effort", {}))
        return [
            ToolCall(id=f"replay-{self.turn}-{i}", name=name, arguments=json.dumps(args))
            for i, (name, args) in enumerate(calls)
        ]


@dataclass
class ModelStats:
    summaries: int = 0
    checkpoints: int = 0


class ReplayModel(InProcessChatModel):
    """A :class:`~ccm_tui.core.models.interface.ChatModel` whose replies come from the transcript."""

    def __init__(self, counter: TokenCounter, summarizer: ChatModel | None = None) -> None:
        self.counter = counter
        self.summarizer = summarizer  # a model that writes the summaries, or None for offline ones
        self.model = summarizer.model if summarizer is not None else "replay"
        self.plan: TurnPlan | None = None
        self._tools_sent = False
        self.stats = ModelStats()
        # what was asked of the model since the runner last took it (the billed comparison, billing.py)
        self.requests: list[tuple[list[dict[str, Any]], list[dict[str, Any]] | None]] = []
        self.states: list[Any] = []  # with each request, what ``observe`` said of the session then
        self.observe: Callable[[], Any] | None = None
        self.side_tokens = 0  # summaries' and checkpoints' input tokens
        self._checkpoint_head = paths.prompt("checkpoint").strip().splitlines()[0][:60]

    def start_turn(self, plan: TurnPlan) -> None:
        self.plan = plan
        self._tools_sent = False

    @property
    def offline(self) -> bool:
        return self.summarizer is None

    @property
    def loaded(self) -> bool:
        return self.summarizer is None or self.summarizer.loaded

    def load(self) -> None:
        if self.summarizer is not None:
            self.summarizer.load()

    # ------------------------------------------------------------ chat
    async def stream_chat(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, on_delta=None
    ) -> Completion:
        plan = self.plan
        if plan is None:
            raise LLMError(ProviderFailure.OTHER, "replay model: no turn planned")
        self._check_tool_results(messages)
        self.requests.append((list(messages), tools))
        self.states.append(self.observe() if self.observe is not None else None)
        calls = plan.tool_calls()
        if calls and tools and not self._tools_sent:
            self._tools_sent = True
            return Completion(content="", tool_calls=calls, finish_reason="tool_calls")
        if on_delta is not None and plan.reply:
            on_delta(plan.reply)
        return Completion(content=plan.reply, finish_reason="stop")

    def _check_tool_results(self, messages: list[dict[str, Any]]) -> None:
        """The lifecycle calls the replay made must have worked; a JSON error means a replay bug."""
        for message in reversed(messages):
            if message.get("role") != "tool":
                break
            try:
                result = json.loads(message.get("content") or "{}")
            except ValueError:
                continue
            if isinstance(result, dict) and result.get("error"):
                raise ReplayToolError(f"turn {self.plan.turn if self.plan else '?'}: {result['error']}")

    # ------------------------------------------------------- summaries
    def _with_closing_reply(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Add the concluding turn's reply to the chunk that ends with that turn's user message."""
        plan = self.plan
        if plan is None or not plan.close or not plan.reply.strip() or len(messages) < 2:
            return messages
        body = str(messages[-1].get("content") or "")
        if not body.rstrip().endswith(f"USER: {plan.user.strip()}"):
            return messages
        body = body.rstrip() + f"\n\nASSISTANT: {plan.reply.strip()}"
        return [*messages[:-1], {**messages[-1], "content": body}]

    async def complete(
        self, messages: list[dict[str, Any]], *, max_tokens: int | None = None, summary: bool = True
    ) -> Completion:
        self.side_tokens += sum(self.counter.count_message(m) for m in messages)
        instructions = str(messages[0].get("content") or "") if messages else ""
        checkpoint = instructions.strip().startswith(self._checkpoint_head)
        if checkpoint:
            self.stats.checkpoints += 1
        else:
            self.stats.summaries += 1
            messages = self._with_closing_reply(messages)
        body = str(messages[-1].get("content") or "") if messages else ""
        if self.summarizer is not None:
            return await self.summarizer.complete(messages, max_tokens=max_tokens, summary=summary)
        # The core asks for twice the cap (headroom for a model); the cap itself is half of it.
        cap = max(16, (max_tokens or 300) // 2)
        return Completion(content=extractive.summarize(body, cap, self.counter), finish_reason="stop")
