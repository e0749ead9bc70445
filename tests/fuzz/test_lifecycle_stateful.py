"""Random sequences of model tool calls and user actions keep the session's invariants.

Invariants after every step: at most one active effort; concluded ⇒ summary; every effort
has its log file; expanded efforts are concluded; what is on disk equals what is in memory;
raw logs only grow (each file's old bytes are a prefix of its new bytes).
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from ccm_tui.config import Settings
from ccm_tui.core.efforts.states import Action
from ccm_tui.core.engine.opening import open_engine
from ccm_tui.core.manifest.effort_list import load_manifest
from ccm_tui.core.models.interface import Completion, InProcessChatModel, ToolCall
from ccm_tui.core.turn.orchestrator import clean_user_text

TOOLS = [
    "open_effort",
    "close_effort",
    "expand_effort",
    "collapse_effort",
    "switch_effort",
    "reopen_effort",
    "route_to_ambient",
    "effort_status",
    "search_efforts",
]
NAMES = ["alpha", "beta", "gamma", "../x", "Alpha"]


class ScriptedModel(InProcessChatModel):
    """Returns the next planned tool call, then a reply."""

    model = "test/scripted"

    def __init__(self) -> None:
        self.plan: list[ToolCall] = []

    async def stream_chat(self, messages, tools, on_delta=None):
        if self.plan and tools:
            return Completion(tool_calls=[self.plan.pop(0)], finish_reason="tool_calls")
        return Completion(content="reply", finish_reason="stop")

    async def complete(self, messages, max_tokens=None, summary=True):
        return Completion(content="a summary of the effort", finish_reason="stop")


class Lifecycle(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.dir = Path(tempfile.mkdtemp()) / "s"
        self.model = ScriptedModel()
        settings_ = Settings(
            model="test/scripted", token_budget=50_000, decay_threshold=2, summary_eviction_threshold=4
        )
        self.engine = open_engine(self.dir, settings_, llm=self.model, retry_base=0)
        self.sizes: dict[Path, bytes] = {}

    def teardown(self) -> None:
        self.engine.close()

    def ids(self) -> list[str]:
        return [e.id for e in self.engine.status().efforts] + ["nope"]

    @rule(
        tool=st.sampled_from(TOOLS),
        pick=st.integers(0, 10),
        name=st.sampled_from(NAMES),
        message=st.text(min_size=1, max_size=30),
    )
    def model_calls_a_tool(self, tool, pick, name, message):
        ids = self.ids()
        args = {
            "open_effort": f'{{"name": "{name}"}}',
            "route_to_ambient": "{}",
            "effort_status": "{}",
            "search_efforts": '{"query": "alpha"}',
            "close_effort": "{}",
        }.get(tool, f'{{"id": "{ids[pick % len(ids)]}"}}')
        self.model.plan = [ToolCall(id="c1", name=tool, arguments=args)]
        outcome = asyncio.run(self.engine.run_turn(message))
        if outcome.cause == "input":
            assert not clean_user_text(message)  # only empty messages are refused

    @rule(
        action=st.sampled_from([Action.EXPAND, Action.COLLAPSE, Action.SWITCH, Action.REOPEN, Action.CONCLUDE]),
        pick=st.integers(0, 10),
    )
    def user_action(self, action, pick):
        ids = self.ids()
        outcome = asyncio.run(self.engine.run_action(action, ids[pick % len(ids)]))
        assert outcome.status in ("done", "failed") and (outcome.ok or outcome.reason)

    @rule(raw=st.sampled_from(["not json", "[1]", "", '{"name": 3}']))
    def model_sends_malformed_arguments(self, raw):
        self.model.plan = [ToolCall(id="c1", name="open_effort", arguments=raw)]
        asyncio.run(self.engine.run_turn("malformed"))

    @invariant()
    def invariants_hold(self):
        efforts = self.engine.status().efforts
        assert sum(e.active for e in efforts) <= 1
        for e in efforts:
            assert e.state.is_open or e.summary
            assert (self.dir / "efforts" / f"{e.id}.jsonl").exists()
            assert not e.expanded or e.status == "concluded"
        on_disk = {(e.id, e.status, e.active, e.summary) for e in load_manifest(self.dir / "manifest.yaml")}
        assert on_disk == {(e.id, e.status, e.active, e.summary) for e in efforts}

    @invariant()
    def raw_logs_only_grow(self):
        paths = [self.dir / "raw.jsonl", *sorted((self.dir / "efforts").glob("*.jsonl"))]
        for path in paths:
            if not path.exists():
                continue
            data = path.read_bytes()
            before = self.sizes.get(path, b"")
            assert data.startswith(before)
            self.sizes[path] = data


TestLifecycle = Lifecycle.TestCase
TestLifecycle.settings = settings(
    max_examples=40, stateful_step_count=25, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
