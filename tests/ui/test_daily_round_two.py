"""Issue 23, a daily user's second round: one test per fault found."""

from __future__ import annotations

from textual import events

from ccm_tui.ui.widgets.effort_list import EffortItem
from ccm_tui.ui.widgets.prompt_input import PromptInput
from tests.helpers.openai_server import text
from tests.helpers.tui import SIZE, build, demo_app, ready, send, server_app, wait_until


async def press_as_terminal(pilot, key: str, character: str) -> None:
    """A key as the terminal's parser gives it: ESC c is ``alt+c`` *with* the character ``c``."""
    pilot.app.post_message(events.Key(key, character))
    await pilot.pause()
    await pilot.pause()


# ------------------------------------------------------------------ 2. Alt+C / Alt+K copy, never type
async def test_alt_c_and_alt_k_copy_with_the_input_or_the_effort_list_focused(tmp_path):
    await build(tmp_path / "s", 2)
    async with demo_app(tmp_path / "s").run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        prompt = screen.query_one(PromptInput)
        prompt.clear()
        prompt.focus()
        copied: list[str] = []
        pilot.app.copy_to_clipboard = copied.append  # type: ignore[method-assign]
        await press_as_terminal(pilot, "alt+c", "c")
        await press_as_terminal(pilot, "alt+k", "k")
        assert prompt.text == ""
        assert copied, "Alt+C copied nothing"

        await pilot.press("ctrl+g")
        assert isinstance(screen.focused, EffortItem)
        before = len(copied)
        await press_as_terminal(pilot, "alt+c", "c")
        await wait_until(pilot, lambda: len(copied) > before, what="Alt+C on the effort list to copy")
        assert isinstance(screen.focused, EffortItem)
        assert prompt.text == ""


# ------------------------------------------------------------------ 11. copy the model's code, not the user's
async def test_copy_code_takes_the_models_last_code_block_not_the_users_paste(tmp_path, llm_server):
    llm_server.push(text("Try this:\n\n```python\nprint('from the model')\n```\n"))
    llm_server.push(text("That traceback means the file is missing."))
    async with server_app(tmp_path / "s", llm_server.base_url).run_test(size=SIZE) as pilot:
        await send(pilot, "how do I print?")
        await send(pilot, "it fails:\n\n```\nTraceback: FileNotFoundError\n```")
        copied: list[str] = []
        pilot.app.copy_to_clipboard = copied.append  # type: ignore[method-assign]
        await pilot.press("alt+k")
        assert copied == ["print('from the model')"]


# ------------------------------------------------------------------ 4. the status line follows the turn
async def test_the_status_label_leaves_loading_the_client_once_the_model_is_asked():
    from textual.app import App, ComposeResult

    from ccm_tui.core.turn import events as te
    from ccm_tui.ui.turn_presenter import TurnPresenter
    from ccm_tui.ui.widgets.chat_log import ChatLog

    class Host(App[None]):
        def compose(self) -> ComposeResult:
            yield ChatLog()

    async with Host().run_test() as pilot:
        presenter = TurnPresenter(pilot.app.query_one(ChatLog), lambda _: None, lambda *a, **k: None)
        presenter.begin("hi")
        steps = [
            te.TurnStarted(turn=1, user="hi"),
            te.Waiting(turn=1, reason="loading the model client…", cause="model"),
            te.Asking(turn=1, attempt=1),
            te.Banner(turn=1, text="provider hiccup (503); retrying in 4.5 s", kind="info"),
            te.Waiting(turn=1, reason="retrying in 4.5 s", cause="retry"),
            te.Asking(turn=1, attempt=2),
        ]
        labels = [await presenter.apply(event) for event in steps]
        assert labels == [
            "Thinking",
            "Loading the model client…",
            "Thinking",
            None,
            "Retrying in 4.5 s",
            "Thinking (attempt 2)",
        ]


# ------------------------------------------------------------------ 9. a long effort name: one line
async def test_a_long_effort_name_is_ellipsized_so_its_banner_stays_one_line():
    from ccm_tui.ui.widgets.banner import BannerLine
    from tests.ui.widgets.test_widgets import WidgetHost

    long_id = "migrate-the-billing-service-from-the-legacy-monolith-to-the-new-event-pipeline"
    banner = BannerLine(f"--- Expanded effort: {long_id} (1,204 tokens loaded) ---")
    async with WidgetHost(banner).run_test(size=(60, 10)) as pilot:
        await pilot.pause()
        shown = str(banner.render())
        assert banner.size.height == 1, shown
        assert shown.startswith("--- Expanded effort: migra") and shown.endswith("(1,204 tokens loaded) ---")
        assert "…" in shown and len(shown) <= banner.content_region.width
        await pilot.resize_terminal(200, 10)
        await pilot.pause()
        assert str(banner.render()) == f"--- Expanded effort: {long_id} (1,204 tokens loaded) ---"


# ------------------------------------------------------------------ 8. the sidebar follows the active effort
def efforts_view(active: str, concluded: int):
    from ccm_tui.core.views.status import EffortState, EffortView

    open_ = [
        EffortView(id=name, name=name, state=EffortState.ACTIVE if name == active else EffortState.BACKGROUND)
        for name in ("alpha", "beta")
    ]
    done = [
        EffortView(id=f"done-{i}", name=f"done-{i}", state=EffortState.CONCLUDED, summary="A summary.")
        for i in range(concluded)
    ]
    return tuple(open_ + done)


def in_view(scroller, widget) -> bool:
    top = scroller.scroll_offset.y
    return (
        top <= widget.virtual_region.y
        and widget.virtual_region.bottom <= top + scroller.scrollable_content_region.height
    )


async def test_the_sidebar_brings_the_active_effort_into_view_and_drops_stale_details():
    from textual.widgets import TextArea

    from ccm_tui.ui.widgets.effort_detail import HINT, EffortDetail
    from ccm_tui.ui.widgets.effort_list import EffortList
    from ccm_tui.ui.widgets.sidebar import Sidebar
    from tests.ui.widgets.test_widgets import WidgetHost

    class Host(WidgetHost):
        def compose(self):
            yield TextArea(id="elsewhere")
            yield self.widget

    sidebar = Sidebar()
    async with Host(sidebar).run_test(size=(60, 30)) as pilot:
        await sidebar.show_efforts(efforts_view("alpha", 25), 3)
        await pilot.pause()
        efforts = sidebar.query_one(EffortList)
        efforts.scroll_end(animate=False)
        await pilot.pause()
        await sidebar.show_efforts(efforts_view("beta", 25), 3)  # the model switched efforts
        await pilot.pause()
        await pilot.pause()
        active = efforts.item("beta")
        assert active is not None and active.has_class("-active")
        assert in_view(efforts, active)

        detail = sidebar.query_one(EffortDetail)
        efforts.item("done-3").focus()
        await pilot.pause()
        assert detail.effort_id == "done-3"
        pilot.app.query_one("#elsewhere").focus()  # back to the input
        await pilot.pause()
        await pilot.pause()
        assert detail.effort_id is None and str(detail.render()) == HINT
        await sidebar.show_efforts(efforts_view("beta", 26), 3)  # a redraw does not bring it back
        assert detail.effort_id is None


# ------------------------------------------------------------------ 10. 80×24 terminals
def screen_rows(app) -> list[str]:
    return ["".join(segment.text for segment in strip) for strip in app.screen._compositor.render_strips()]


async def test_at_80_columns_the_footer_has_no_stray_character(tmp_path):
    from textual.widgets import Footer

    await build(tmp_path / "s", 7)
    async with demo_app(tmp_path / "s").run_test(size=(80, 24)) as pilot:
        screen = await ready(pilot)
        await pilot.pause()
        footer = screen.query_one(Footer)
        assert footer.virtual_size.width > 80  # the keys overflow under the palette key …
        assert screen_rows(pilot.app)[-1].endswith("^p Commands ")  # … which covers the last column


async def test_at_80_columns_the_inspector_leaves_the_text_room_for_its_headers(tmp_path):
    from textual.widgets import OptionList, TextArea

    await build(tmp_path / "s", 7)
    async with demo_app(tmp_path / "s").run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        await pilot.press("f2")
        text = await wait_until(pilot, lambda: pilot.app.screen.query("#inspector-text").results(TextArea))
        text = next(iter(text))
        await pilot.pause()
        sections = pilot.app.screen.query_one("#inspector-sections", OptionList)
        assert sections.size.width <= 32
        header = text.text.splitlines()[0]
        assert header.startswith("── [1] system")
        assert len(header) <= text.content_size.width  # on one line, not wrapped over three
        rows = screen_rows(pilot.app)
        assert any("system + summaries" in row for row in rows)


async def test_at_80_columns_the_keys_help_indents_wrapped_descriptions(tmp_path):
    await build(tmp_path / "s", 2)
    async with demo_app(tmp_path / "s").run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        await pilot.press("f1")
        await wait_until(pilot, lambda: type(pilot.app.screen).__name__ == "HelpScreen")
        await pilot.pause()
        rows = screen_rows(pilot.app)
        at = next(i for i, row in enumerate(rows) if "Cancel the reply being written" in row)
        column = rows[at].index("Cancel")
        following = rows[at + 1]
        assert following[:column].strip(" █▌▐▎▊▏│") == "", following  # the wrapped rest stays in its column


# ------------------------------------------------------------------ 12. Switch model checks the id first
async def test_switch_model_refuses_an_unknown_id_and_says_why(tmp_path, llm_server):
    from textual.widgets import Input

    from ccm_tui.ui.screens.model_picker import ModelPicker

    llm_server.serve_models("fake-model")
    async with server_app(tmp_path / "s", llm_server.base_url).run_test(size=SIZE) as pilot:
        await ready(pilot)
        app = pilot.app
        app.action_switch_model()
        picker = await wait_until(
            pilot, lambda: isinstance(app.screen, ModelPicker) and app.screen.query(Input) and app.screen
        )
        picker.query_one(Input).value = "openai/gpt-nonexistent"
        await pilot.pause()
        await pilot.press("enter")
        status = picker.query_one("#model-status")
        await wait_until(pilot, lambda: "Not switched" in str(status.render()), what="the refusal")
        assert "gpt-nonexistent" in str(status.render())
        assert app.settings.model == "openai/fake-model"
        assert app.screen is picker and picker.query_one(Input).value == "openai/gpt-nonexistent"  # to correct it
        await pilot.press("escape")


# ------------------------------------------------------------------ prompt history and the draft
async def test_up_and_down_in_an_empty_input_walk_the_sessions_prompts_across_launches(tmp_path, llm_server):
    from ccm_tui.core.session.prompt_history import HISTORY_FILE

    llm_server.push(text("One."))
    llm_server.push(text("Two."))
    async with server_app(tmp_path / "s", llm_server.base_url).run_test(size=SIZE) as pilot:
        await send(pilot, "first question")
        await send(pilot, "second question\nwith two lines")
        screen = await ready(pilot)
        prompt = screen.query_one(PromptInput)
        prompt.focus()
        assert prompt.text == ""
        await pilot.press("up")
        assert prompt.text == "second question\nwith two lines"
        await pilot.press("up")
        assert prompt.text == "first question"
        await pilot.press("up")  # nothing older: stays
        assert prompt.text == "first question"
        await pilot.press("down", "down")
        assert prompt.text == ""
        await pilot.press("up")
        prompt.insert(" edited")  # an edited entry: the arrows move the cursor again
        await pilot.press("up")
        assert prompt.text == "second question\nwith two lines edited"
    assert (tmp_path / "s" / HISTORY_FILE).is_file()

    async with server_app(tmp_path / "s", llm_server.base_url).run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        prompt = screen.query_one(PromptInput)
        prompt.clear()
        prompt.focus()
        await pilot.press("up")
        assert prompt.text == "second question\nwith two lines"


async def test_a_draft_survives_quitting_and_relaunching(tmp_path, llm_server):
    async with server_app(tmp_path / "s", llm_server.base_url).run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        screen.query_one(PromptInput).set_text("half a thought, to finish tomorrow")
        await pilot.press("ctrl+q")
    async with server_app(tmp_path / "s", llm_server.base_url).run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        assert screen.query_one(PromptInput).text == "half a thought, to finish tomorrow"
        screen.query_one(PromptInput).clear()
        await pilot.press("ctrl+q")
    async with server_app(tmp_path / "s", llm_server.base_url).run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        assert screen.query_one(PromptInput).text == ""  # a cleared input leaves no draft behind


# ------------------------------------------------------------------ a message typed while a reply streams
async def test_a_message_sent_while_a_reply_runs_is_queued_then_sent(tmp_path, llm_server):
    from tests.helpers.openai_server import hang
    from tests.helpers.tui import idle

    llm_server.push(hang(3, text("First answer.")))
    llm_server.push(text("Second answer."))
    async with server_app(tmp_path / "s", llm_server.base_url).run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        prompt = screen.query_one(PromptInput)
        prompt.focus()
        prompt.set_text("first question")
        await pilot.press("enter")
        await wait_until(pilot, lambda: screen.busy and llm_server.chat_requests(), what="the first reply to run")
        prompt.set_text("second question")
        await pilot.press("enter")  # queued, not refused
        await wait_until(pilot, lambda: screen.query(".message.-user.-queued"), what="the queued message")
        assert prompt.text == ""
        await idle(pilot, timeout=30)
        shown = [m.text for m in screen.chat_log.messages()]
        assert shown == ["first question", "First answer.", "second question", "Second answer."]
        assert not screen.query(".message.-queued")


# ------------------------------------------------------------------ export the whole conversation
async def test_the_whole_conversation_exports_to_markdown_in_the_order_it_was_said(tmp_path):
    from textual.widgets import Input

    from ccm_tui.ui.palette import app_commands
    from ccm_tui.ui.screens.question import PromptDialog

    await build(tmp_path / "s", 7)  # ambient chat, an effort concluded, another open, an aside
    async with demo_app(tmp_path / "s").run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        command = {name: run for name, run, _ in app_commands(screen)}["Export the conversation…"]
        command()
        dialog = await wait_until(
            pilot,
            lambda: isinstance(pilot.app.screen, PromptDialog) and pilot.app.screen.query(Input) and pilot.app.screen,
        )
        dialog.query_one(Input).value = str(tmp_path / "out" / "all.md")
        await pilot.press("enter")
        await wait_until(pilot, lambda: (tmp_path / "out" / "all.md").is_file(), what="the export")
    text = (tmp_path / "out" / "all.md").read_text(encoding="utf-8")
    order = [text.index(s) for s in ("Hi! What is this app?", "## Effort: japan-trip", "Quick aside", "flaky")]
    assert order == sorted(order)
    assert text.count("### You") == 7


# ------------------------------------------------------------------ find in the visible chat
async def test_find_in_the_chat_reaches_each_matching_message_newest_first(tmp_path):
    from textual.widgets import Input

    from ccm_tui.ui.palette import app_commands
    from ccm_tui.ui.screens.question import PromptDialog

    await build(tmp_path / "s", 7)
    async with demo_app(tmp_path / "s").run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        helps = {name: help for name, _, help in app_commands(screen)}
        assert helps["Find in the chat…"].endswith("(F3)")
        await pilot.press("f3")  # nothing looked for yet: it asks
        dialog = await wait_until(
            pilot,
            lambda: isinstance(pilot.app.screen, PromptDialog) and pilot.app.screen.query(Input) and pilot.app.screen,
        )
        dialog.query_one(Input).value = "kyoto"
        await pilot.press("enter")
        await wait_until(pilot, lambda: screen.found is not None, what="a match")
        hits = [m for m in screen.chat_log.messages() if "kyoto" in m.text.casefold()]
        assert len(hits) >= 2 and screen.found is hits[-1] and hits[-1].has_class("-found")
        await pilot.press("f3")
        assert screen.found is hits[-2] and not hits[-1].has_class("-found")
        log = screen.chat_log
        assert log.scroll_offset.y <= hits[-2].virtual_region.y < log.scroll_offset.y + log.size.height
