"""After a relaunch the whole chat can be reached: scrolling to the top loads what was said before,
a page at a time, and the lines in view stay put (issue 23, item 3)."""

from __future__ import annotations

from ccm_tui.demo import script_messages
from ccm_tui.ui.widgets.chat_log import ChatLog
from tests.helpers.demo_chat import played
from tests.helpers.tui import SIZE, build, demo_app, ready, scroll_to_start, wait_until


async def test_scrolling_up_after_a_relaunch_reaches_the_first_message(tmp_path):
    await played(tmp_path / "s", rounds=2)
    first = script_messages()[0]
    async with demo_app(tmp_path / "s").run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        log = screen.query_one(ChatLog)
        await wait_until(pilot, lambda: log.messages("user"), what="the history")
        at_start = len(log.messages())
        assert log.messages("user")[0].text != first  # the first screen shows only the newest lines
        await pilot.press("ctrl+home")  # one press: the first message (issue 38, item 6)
        await wait_until(pilot, lambda: log.messages("user")[0].text == first, what="the first message")
        assert not log.more_before and not log.held
        users = [m.text for m in log.messages("user")]
        assert users == (list(script_messages()) * 2)[: len(users)]  # from the start, once each, in order
        assert log.newer_hidden  # the present comes back with Ctrl+End
        assert at_start


async def test_a_loaded_page_keeps_the_lines_in_view_where_they_were(tmp_path):
    await played(tmp_path / "s", rounds=2)
    async with demo_app(tmp_path / "s").run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        log = screen.query_one(ChatLog)
        await wait_until(pilot, lambda: log.messages("user"), what="the history")
        log.scroll_home(animate=False, immediate=True)
        top = log.messages()[0]
        await pilot.press("pageup")
        await wait_until(pilot, lambda: log.messages()[0] is not top, what="an older page")
        await pilot.pause()
        await pilot.pause()
        assert log.scroll_y > 0  # the old top is still in view: the new page is above it
        assert top.region.y >= log.region.y - 1


async def test_history_after_a_relaunch_shows_the_effort_banners(tmp_path):
    from ccm_tui.ui.widgets.banner import BannerLine

    await build(tmp_path / "s", 7)  # opened, concluded, another opened, the first expanded
    async with demo_app(tmp_path / "s").run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await scroll_to_start(pilot, screen.query_one(ChatLog))
        shown = [str(b.render()) for b in screen.query(BannerLine)]
        for banner in (
            "--- Opened effort: japan-trip ---",
            "--- Concluded effort: japan-trip ---",
            "--- Opened effort: flaky-login-test ---",
        ):
            assert banner in shown
        assert any(b.startswith("--- Expanded effort: japan-trip (") for b in shown)
        assert shown.index("--- Opened effort: japan-trip ---") < shown.index("--- Concluded effort: japan-trip ---")


async def test_a_session_restored_into_while_closed_opens_with_the_import_banner(tmp_path):
    """Issue 38: a session whose only news is a transcript restored into it while the TUI was closed
    opened with a blank chat; it opens with the banner a restore into the open chat shows."""
    from ccm_tui.core.efforts import lifecycle
    from ccm_tui.core.session.session import Session
    from ccm_tui.ui.widgets.banner import BannerLine

    with Session.open(tmp_path / "s") as session:  # (as `ccm-tui restore` lands it, the TUI closed)
        said = [
            {"role": r, "content": f"imported {r} line", "ts": "2099-01-01T00:00:00.000Z"}
            for r in ("user", "assistant")
        ]
        lifecycle.land_imported(session, "old aider session", said, "An imported session.", {"kind": "aider"})
    async with demo_app(tmp_path / "s").run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        shown = await wait_until(pilot, lambda: [str(b.render()) for b in screen.query(BannerLine)], what="a banner")
        assert "--- Imported effort: old-aider-session ---" in shown
        assert not screen.query_one(ChatLog).messages()  # the transcript's lines are not chat
