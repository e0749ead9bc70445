"""Sessions played from the demo script (the offline scripted model), and their chat lines as the pane shows them."""

from __future__ import annotations

from pathlib import Path

from ccm_tui.config import Settings
from ccm_tui.core.engine.opening import open_engine
from ccm_tui.core.session.chat_line import LoggedLine
from ccm_tui.demo import DEMO_MODEL, DemoModel, script_messages

BASE = Settings(model=DEMO_MODEL, token_budget=6_000)


async def played(directory: Path, rounds: int = 2) -> None:
    """The demo script, ``rounds`` times over (ambient chat, efforts opened, concluded, reopened …)."""
    engine = open_engine(directory, BASE.with_overrides("test", decay_threshold=2), llm=DemoModel(delay=0))
    try:
        for _ in range(rounds):
            for text in script_messages():
                outcome = await engine.run_turn(text)
                assert outcome.ok, outcome.reason
    finally:
        engine.close()


def shown(lines: list[LoggedLine]) -> list[tuple[str, str, str]]:
    """What each line shows: who (or a banner), the text, where it was logged."""
    return [("banner" if line.banner else line.role, line.content, line.logged_to) for line in lines]
