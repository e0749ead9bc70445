"""Scrolling back: page after page, the chat before the lines shown comes back whole, in order,
with its banners, as a relaunch that showed everything at once would show it (issue 23, item 3)."""

from __future__ import annotations

from pathlib import Path

from ccm_tui.core.engine.opening import open_engine
from ccm_tui.core.session.chat_line import LoggedLine
from ccm_tui.demo import DemoModel
from tests.helpers.demo_chat import BASE, played, shown


def scrolled_back(directory: Path, first: int, page: int) -> tuple[list[LoggedLine], list[LoggedLine], int]:
    """The chat a relaunch shows at once, and the same chat rebuilt from a first screen of ``first``
    lines and pages of ``page`` going back, with the number of pages it took."""
    engine = open_engine(directory, BASE, llm=DemoModel(delay=0))
    try:
        everything = engine.recent_lines(limit=100_000)
        lines = engine.recent_lines(limit=first)
        pages = 0
        while True:
            older = engine.older_lines(lines[0], page)
            assert older.lines or not older.more
            lines = list(older.lines) + lines
            pages += 1
            if not older.more:
                break
            assert pages < 500
        return everything, lines, pages
    finally:
        engine.close()


async def test_scrolling_back_page_by_page_gives_the_whole_chat_in_order_with_its_banners(tmp_path):
    await played(tmp_path / "s")
    everything, rebuilt, pages = scrolled_back(tmp_path / "s", first=10, page=7)
    assert pages >= 5  # (the second round opens no -2 copies of its efforts: fewer banners than before)
    assert len([line for line in everything if not line.banner]) > 40
    assert any(line.banner for line in everything)
    assert shown(rebuilt) == shown(everything)


async def test_the_page_before_the_first_line_is_empty_and_says_there_is_no_more(tmp_path):
    await played(tmp_path / "s", rounds=1)
    engine = open_engine(tmp_path / "s", BASE, llm=DemoModel(delay=0))
    try:
        everything = engine.recent_lines(limit=100_000)
        page = engine.older_lines(everything[0], 20)
        assert page.lines == () and not page.more
    finally:
        engine.close()


async def test_scrolling_back_reads_only_the_logs_the_conversation_wrote_to(tmp_path):
    """An imported effort's log (never said in this chat) is not read when scrolling back."""
    from ccm_tui.core.session.session import Session

    await played(tmp_path / "s", rounds=1)
    session = Session.open(tmp_path / "s")
    session.effort_path("not-said-here").write_text(
        '{"role": "user", "content": "imported elsewhere", "ts": "2000-01-01T00:00:00.000Z"}\n', encoding="utf-8"
    )
    session.lock.release()
    everything, rebuilt, _ = scrolled_back(tmp_path / "s", first=5, page=9)
    assert "imported elsewhere" not in [line.content for line in rebuilt]
    assert shown(rebuilt) == shown(everything)
