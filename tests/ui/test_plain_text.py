"""Logged text holding brackets, markup-looking tags, Markdown links, ``**`` and backslashes is shown as it
was written, everywhere the UI shows it, and never ends the app (issue 30, item 1)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from textual.command import CommandList
from textual.content import Content

from ccm_tui.core.search._results import Marked
from ccm_tui.core.session.session import Session
from ccm_tui.core.text.terminal import terminal_safe
from ccm_tui.ui.plain_text import MATCH_STYLE, highlighted, plain
from ccm_tui.ui.widgets.effort_list import EffortItem
from ccm_tui.ui.widgets.header import AppHeader
from tests.helpers.sessionkit import concluded_effort, exchange
from tests.helpers.tui import SIZE, demo_app, ready, wait_until

# What a day of real use put into logs: INI sections, TOML tables, Markdown links, things that look
# like Textual markup (a closing tag, a style, a link, an action), Windows paths.
HOSTILE = [
    "[pgbouncer]\npool_mode = transaction\nmax_client_conn = 200",
    "my pyproject has a [tool.poetry] table",
    "please read the [README] first, then check the [docs](https://example.com/docs) page",
    "a closing tag [/] on its own, then [/bold] and [bold]not bold[/bold]",
    "[link=https://evil.example]click[/link] and [@click=app.quit]quit[/]",
    "**really** important __note__ with a [$accent]variable[/]",
    "C:\\Users\\me\\[x]\\file.txt and a trailing backslash \\",
]


def matched(content: Content) -> list[str]:
    return [content.plain[s.start : s.end] for s in content.spans if str(s.style) == MATCH_STYLE]


# ---------------------------------------------------------------- the content builders, over any text
@given(st.text())
def test_plain_shows_any_text_exactly(text: str) -> None:
    assert plain(text).plain == terminal_safe(text)  # (less what a terminal would act on)


MARKERS = "\x02\x03"  # the index's private match markers (control characters: logged text never keeps them)


@given(st.lists(st.tuples(st.text().map(lambda t: t.translate({ord(c): None for c in MARKERS})), st.booleans())))
@settings(max_examples=300)
def test_a_passage_shows_its_text_and_highlights_exactly_the_matched_terms(pieces) -> None:
    """Whatever the text around a match holds (brackets, markup, ``**``, a lone ``*``, backslashes),
    the passage shows that text and highlights the matched terms, no more, no less."""
    raw = "".join(f"\x02{text}\x03" if hit else text for text, hit in pieces)
    found = Marked.from_markers(raw)
    assert found.text == "".join(text for text, _ in pieces)
    assert "".join(found.text[a:b] for a, b in found.spans) == "".join(text for text, hit in pieces if hit)
    content = highlighted(found.text, found.spans)
    cut = [(found.text[a:b], True) for a, b in found.spans]
    assert "".join(matched(content)) == "".join(terminal_safe(text) for text, _ in cut)
    assert terminal_safe(content.plain) == content.plain  # nothing a terminal acts on


def test_hostile_lines_are_shown_as_written() -> None:
    for line in HOSTILE:
        assert plain(line).plain == line
        found = Marked.from_markers(line.replace("transaction", "\x02transaction\x03"))
        assert highlighted(found.text, found.spans).plain == line


# ---------------------------------------------------------------- the app, over a session holding them
def hostile_session(directory: Path) -> Path:
    session = Session.open(directory)
    try:
        for n, line in enumerate(HOSTILE):
            concluded_effort(
                session,
                f"[wip] config {n} [/]",
                exchange(f"here is my config {line}", f"noted: {line}"),
                summary=f"Settled {line}",
            )
    finally:
        session.close()
    return directory


def palette_text(pilot) -> str:
    lists = pilot.app.screen.query(CommandList)
    if not lists:
        return ""
    return "\n".join(str(getattr(option.prompt, "plain", option.prompt)) for option in lists.first().options)


async def test_search_over_bracketed_text_shows_it_and_does_not_end_the_app(tmp_path) -> None:
    async with demo_app(hostile_session(tmp_path / "s")).run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("ctrl+f")
        await pilot.pause()
        await pilot.press(*"pgbouncer")
        shown = await wait_until(pilot, lambda: "pgbouncer" in palette_text(pilot) and palette_text(pilot))
        assert "[pgbouncer]" in shown
        for word, expected in (
            ("poetry", "[tool.poetry]"),
            ("README", "[README]"),
            ("docs", "[docs](https://example.com/docs)"),
            ("evil", "[link=https://evil.example]click[/link]"),
            ("Users", "C:\\Users\\me\\[x]\\file.txt"),
        ):
            await pilot.press("escape", "ctrl+f")
            await pilot.pause()
            await pilot.press(*word)
            await wait_until(pilot, lambda e=expected: e in palette_text(pilot), what=f"{expected} in the results")
        await pilot.press("escape")
        assert pilot.app.is_running


async def test_the_command_palette_over_bracketed_text_does_not_end_the_app(tmp_path) -> None:
    async with demo_app(hostile_session(tmp_path / "s")).run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"bold")
        await wait_until(pilot, lambda: "[bold]" in palette_text(pilot), what="the effort passage in the palette")
        await pilot.press("escape")
        assert pilot.app.is_running


async def test_names_summaries_and_notifications_are_plain(tmp_path) -> None:
    async with demo_app(hostile_session(tmp_path / "s")).run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        items = await wait_until(pilot, lambda: list(screen.query(EffortItem)), what="the effort rows")
        rows = "\n".join(str(item.render()) for item in items)
        assert "[wip] config 0 [/]" in rows
        tooltips = [str(getattr(item.tooltip, "plain", item.tooltip)) for item in items]
        assert any("[pgbouncer]" in t for t in tooltips)
        header = screen.query_one(AppHeader)
        header.status = "▶ [wip] config [/]"
        await pilot.pause()
        assert "[wip] config [/]" in str(header.query_one(".header-status").render())
        screen.notify("could not read [docs](x) [/] [bold]", title="[/]")
        await pilot.pause()
        assert pilot.app.is_running
