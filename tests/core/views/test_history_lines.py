"""The chat a relaunch rebuilds from the logs shows the banners as they were shown live."""

from __future__ import annotations

from pathlib import Path

from ccm_tui.config import Settings
from ccm_tui.core.efforts.states import Action
from ccm_tui.core.engine.opening import open_engine
from ccm_tui.demo import DEMO_MODEL, DemoModel, script_messages

Shown = list[tuple[str, str]]


async def live_and_rebuilt(
    directory: Path, budget: int = 6_000, budgets: dict[int, int] | None = None, **settings
) -> tuple[Shown, Shown]:
    """Every demo turn as the TUI showed it (the message, the turn's effort banners above the reply,
    the reply), and the chat a relaunch rebuilds from the session's files (``budgets``: the budget
    from the script's step N on)."""
    base = Settings(model=DEMO_MODEL, token_budget=budget)
    engine = open_engine(directory, base.with_overrides("test", **settings), llm=DemoModel(delay=0), budget=budget)
    live: Shown = []
    try:
        for step, text in enumerate(script_messages()):
            if step in (budgets or {}):
                engine.set_budget((budgets or {})[step])
            outcome = await engine.run_turn(text)
            assert outcome.ok, outcome.reason
            live.append(("user", text))
            live += [("banner", b) for b in outcome.banners if b.startswith(("--- ", "AUTO-COMPACTION"))]
            live.append(("assistant", outcome.reply))
    finally:
        engine.close()
    engine = open_engine(directory, base, llm=DemoModel(delay=0), budget=budget)
    try:
        rebuilt: Shown = []
        for line in engine.recent_lines(limit=500):
            if line.banner:
                rebuilt.append(("banner", f"--- {line.content} ---" if line.kind == "effort" else line.content))
            elif line.role == "system":
                rebuilt.append(("banner", f"--- {line.content.strip(' -')} ({line.logged_to}) ---"))
            else:
                rebuilt.append((line.role, line.content))
    finally:
        engine.close()
    return live, rebuilt


async def test_a_relaunch_shows_each_banner_once_worded_and_placed_as_live(tmp_path):
    live, rebuilt = await live_and_rebuilt(tmp_path / "s", decay_threshold=2)
    banners = [text for kind, text in live if kind == "banner"]
    assert "--- Reopened effort: japan-trip ---" in banners
    assert any(b.startswith("--- Auto-collapsed effort: japan-trip (inactive for 2 turns)") for b in banners)
    assert rebuilt == live


async def test_auto_compaction_and_what_it_collapsed_come_back_as_they_were_shown(tmp_path):
    # japan-trip is expanded while it fits (an expansion the budget cannot hold is refused), then the
    # budget shrinks and auto-compaction collapses it
    expanded_at = next(i for i, text in enumerate(script_messages()) if "which day did we put Nara" in text)
    budgets = {expanded_at + 1: 2_600, len(script_messages()) - 1: 6_000}  # (the last step: room again)
    live, rebuilt = await live_and_rebuilt(tmp_path / "s", budget=6_000, budgets=budgets)
    assert "--- Expanded effort: japan-trip (858 tokens loaded) ---" in [text for _, text in live]
    banners = [text for kind, text in live if kind == "banner"]
    assert "--- Collapsed effort: japan-trip (auto-compaction) ---" in banners
    assert any(b.startswith("AUTO-COMPACTION #1: ") for b in banners)
    assert rebuilt == live


def _imported(directory: Path, lines: int = 60) -> None:
    """A transcript imported into the session as a concluded effort (as `ccm-tui restore` lands it)."""
    from ccm_tui.core.efforts import lifecycle
    from ccm_tui.core.session.session import Session

    session = Session.open(directory)
    try:
        messages = [
            {"role": "user" if i % 2 == 0 else "assistant", "content": f"imported line {i}\n>>>>>>> REPLACE"}
            for i in range(lines)
        ]
        for m in messages:
            m["ts"] = "2099-01-01T00:00:00.000Z"  # (any time: an import is never the conversation's)
        lifecycle.land_imported(session, "old aider session", messages, "An imported session.", {"kind": "aider"})
    finally:
        session.close()


async def test_an_imported_transcript_is_never_shown_as_chat_only_its_banner(tmp_path):
    """Restoring a transcript into a session (closed, or open in the TUI: the same reader) adds one
    banner, never the transcript's messages (issue 30, items 3 and 4)."""
    directory = tmp_path / "s"
    live, _ = await live_and_rebuilt(directory)
    _imported(directory)
    engine = open_engine(directory, Settings(model=DEMO_MODEL, token_budget=6_000), llm=DemoModel(delay=0))
    try:
        shown = engine.recent_lines(limit=40)
        contents = [line.content for line in shown]
        assert not any("imported line" in c for c in contents)
        assert "Imported effort: old-aider-session" in contents
        said = [(line.role, line.content) for line in shown if not line.banner and line.role != "system"]
        assert said == [item for item in live if item[0] != "banner"][-len(said) :]
        # reopened and talked about: the new exchange is shown, the imported lines still are not
        outcome = await engine.run_action(Action.REOPEN, "old-aider-session")
        assert outcome.ok, outcome.reason
        outcome = await engine.run_turn("what did that session change?")
        assert outcome.ok and outcome.logged_to == "old-aider-session"
        contents = [line.content for line in engine.recent_lines(limit=40)]
        assert "what did that session change?" in contents
        assert not any("imported line" in c for c in contents)
    finally:
        engine.close()


def test_a_rebuilt_expansion_banner_separates_thousands_as_the_live_one():
    from ccm_tui.core.views._history_lines import _banner_text

    assert _banner_text({"event": "effort_expanded", "tokens": 36636}, "auth-bug") == (
        "Expanded effort: auth-bug (36,636 tokens loaded)"
    )
    assert _banner_text({"event": "effort_expanded", "tokens": 423}, "auth-bug") == (
        "Expanded effort: auth-bug (423 tokens loaded)"
    )
    assert _banner_text({"event": "effort_expanded", "tokens": "x"}, "a") == "Expanded effort: a (? tokens loaded)"
