"""A turn is one commit (issue 43): what a plain turn changes reaches the disk in three fsyncs
(``turn_start``, the exchange, and its end: ``message_logged`` with ``turn_done`` in one append)
and at most one whole-file replacement (``session_state.json``, a snapshot rewritten only when it
changed and not fsynced; ``expanded.json`` only when the view changed). Counted by wrapping the
calls themselves, through the controller the TUI uses."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from ccm_tui.core.api import OpenOptions, SendMessage, SessionController
from tests.helpers.openai_server import call, text, tool_calls
from tests.helpers.sessionkit import jsonl, settings_for


@contextmanager
def counted(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[str]]:
    """Every fsync, fdatasync and os.replace made meanwhile (by any thread), by kind."""
    seen: Counter[str] = Counter()
    for name in ("fsync", "fdatasync", "replace"):
        real = getattr(os, name)

        def wrapper(*args, _real=real, _name=name, **kwargs):
            seen[_name if _name != "replace" else f"replace {Path(str(args[1])).name}"] += 1
            return _real(*args, **kwargs)

        monkeypatch.setattr(os, name, wrapper)
    try:
        yield seen
    finally:
        monkeypatch.undo()


def syncs(seen: Counter[str]) -> int:
    return seen["fsync"] + seen["fdatasync"]


def replacements(seen: Counter[str]) -> int:
    return sum(n for kind, n in seen.items() if kind.startswith("replace"))


@pytest.fixture
async def controller(tmp_path, llm_server):
    made = SessionController(tmp_path / "s", settings_for(llm_server), options=OpenOptions(retry_base=0))
    await made.open()
    for i in range(2):  # warm: the snapshots exist, the first turn's one-off writes are done
        llm_server.push(text(f"reply {i}"))
        await made.run(SendMessage(f"warm-up message {i}"))
    yield made
    await made.close()


async def test_a_plain_turn_is_three_fsyncs_and_one_replacement(controller, llm_server, monkeypatch):
    llm_server.push(text("ok, noted."))
    with counted(monkeypatch) as seen:
        outcome = await controller.run(SendMessage("a plain message"))
    assert outcome.status.value == "done"
    assert syncs(seen) <= 3, seen
    assert replacements(seen) <= 1, seen
    events = [e["event"] for e in jsonl(controller.session_dir / "events.jsonl")]
    # the end of the turn is one append: message_logged and turn_done side by side
    assert events[-2:] == ["message_logged", "turn_done"]


async def test_a_turn_that_ends_no_differently_leaves_the_snapshots_alone(controller, llm_server, monkeypatch):
    """The view (expansions, references) does not change in a plain ambient turn: not rewritten."""
    llm_server.push(text("fine."))
    with counted(monkeypatch) as seen:
        await controller.run(SendMessage("another plain message"))
    assert seen["replace expanded.json"] == 0, seen


async def test_a_concluding_turn_stays_small(controller, llm_server, monkeypatch):
    """Opening and concluding write the effort's journal entry and its events; say the figure."""
    llm_server.push(tool_calls(call("open_effort", {"name": "tax return"})), text("Opened."))
    await controller.run(SendMessage("let's do my tax return"))
    # the tool call, the summary call it makes, then the reply
    llm_server.push(tool_calls(call("close_effort", {})), text("Tax return: filed."), text("Concluded."))
    with counted(monkeypatch) as seen:
        outcome = await controller.run(SendMessage("the tax return is done, conclude it"))
    assert outcome.status.value == "done", outcome.reason
    # on the acknowledged path: turn_start, the conclusion (its journal entry and event in one append),
    # tool_called, the exchange, the end; then, once the queue is empty, manifest.yaml's flush (2)
    assert syncs(seen) <= 7, seen
    assert replacements(seen) <= 4, seen  # expanded.json twice and session_state.json (not fsynced), manifest.yaml


def test_a_send_opens_turns_and_closes_in_five_fsyncs(tmp_path, llm_server, monkeypatch):
    """``ccm-tui send`` is a whole run: session_start, the turn's three, session_end."""
    from ccm_tui.cli import main

    llm_server.responder = lambda body: text("noted.")
    argv = ["send", "--session-dir", str(tmp_path / "s"), "--model", "openai/fake-model"]
    argv += ["--api-base", llm_server.base_url]
    assert main([*argv, "first"]) == 0
    with counted(monkeypatch) as seen:
        assert main([*argv, "second"]) == 0
    assert syncs(seen) <= 5, seen
    assert replacements(seen) <= 2, seen  # session_state.json at the turn's end and at close
