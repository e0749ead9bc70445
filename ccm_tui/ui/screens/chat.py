"""The main screen: chat pane, prompt, live effort sidebar and token meter.

The :class:`~ccm_tui.ui.session_host.SessionHost` child owns the engine; its messages bubble up here.
Each exchange is a :class:`~ccm_tui.ui.widgets.turn_view.TurnView` that draws its own events; this
screen lays out, routes and dispatches. It uses the engine only through its methods.
"""

from __future__ import annotations

from pathlib import Path

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import Footer, Static

from ...config import Settings
from ...core import turn_events as te
from ...core.chat_model import ChatModel
from ...core.engine import Engine, now_iso
from .. import messages as msg
from ..demo_driver import DemoDriver
from ..effort_actions import EffortActions
from ..keys import CHAT_BINDINGS
from ..session_host import SessionHost
from ..turn_runner import TurnRunner
from ..widgets.chat_log import ChatLog
from ..widgets.header import AppHeader
from ..widgets.prompt_input import PromptInput
from ..widgets.sidebar import Sidebar
from ..widgets.turn_status import TurnStatus
from ..widgets.turn_view import TurnView
from .choice import unanswered_dialog

HINT = "Enter send · Alt+Enter or Ctrl+J newline · Esc cancel a reply · F1 keys · Ctrl+P all commands"
NO_TOOLS_HINT = "no tools: Ctrl+O opens an effort, Ctrl+G then d concludes it"
DEMO_HINT = "DEMO · Enter sends the scripted message (edit it if you like) · F6 autoplay · Ctrl+P all commands"


NARROW_BELOW = 90  # columns
WIDE_FROM = 120


class ChatScreen(Screen[None]):
    BINDINGS = CHAT_BINDINGS

    # -wide: full sidebar; -medium: a narrower one; -narrow: the sidebar is hidden until Ctrl+B
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (NARROW_BELOW, "-medium"), (WIDE_FROM, "-wide")]

    busy: reactive[bool] = reactive(False, init=False)
    show_sidebar: reactive[bool | None] = reactive(None, init=False)  # None: as the width decides

    def __init__(
        self,
        settings: Settings,
        session_dir: Path,
        *,
        demo: bool = False,
        llm: ChatModel | None = None,
        watch: bool = True,
        warm_up: bool = True,
        autoplay: bool = False,
    ) -> None:
        super().__init__()
        self.demo = demo
        self.host = SessionHost(settings, session_dir, llm=llm, watch=watch, warm_up=warm_up)
        self.driver = DemoDriver(self, autoplay=autoplay)
        self.efforts = EffortActions(self)
        self.turns = TurnRunner(self)
        self._seen_ts = ""
        self._sidebar_queued = False

    @property
    def settings(self) -> Settings:
        return self.host.settings

    @property
    def engine(self) -> Engine | None:
        return self.host.engine

    @property
    def last_error(self) -> str | None:
        return self.host.last_error

    @property
    def prompt(self) -> PromptInput:
        return self.query_one(PromptInput)

    @property
    def chat_log(self) -> ChatLog:
        return self.query_one(ChatLog)

    # ------------------------------------------------------------------ layout
    def compose(self) -> ComposeResult:
        yield self.host
        yield AppHeader(id="header")
        with Horizontal(id="body"):
            with Vertical(id="chat-pane"):
                yield ChatLog(id="chat-log")
                yield TurnStatus(id="turn-status")
                yield PromptInput(id="prompt", placeholder="Message the model…")
                yield Static(DEMO_HINT if self.demo else HINT, id="prompt-hint")
            yield Sidebar(id="sidebar")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self._show_identity()
        self.prompt.focus()
        self.host.open()
        self.set_interval(0.05, self.driver.tick)

    def _show_identity(self) -> None:
        header = self.query_one(AppHeader)
        header.session_name = "demo" if self.demo else self.host.session_dir.name
        header.model = self.settings.model or ""
        header.demo = self.demo
        self.on_resize()

    @property
    def sidebar_visible(self) -> bool:
        return self.show_sidebar if self.show_sidebar is not None else self.size.width >= NARROW_BELOW

    def on_resize(self) -> None:
        self.update_hint()

    def update_hint(self) -> None:
        """The line under the prompt: keys, the hidden sidebar, and a model without tools (efforts by hand)."""
        hint = DEMO_HINT if self.demo else HINT
        if self.engine is not None and self.engine.has_model and not self.engine.tools_enabled:
            hint = f"{NO_TOOLS_HINT} · {hint}"
        self.query_one("#prompt-hint", Static).update(hint if self.sidebar_visible else f"Ctrl+B efforts · {hint}")

    def watch_show_sidebar(self, show: bool | None) -> None:
        self.set_class(show is True, "-sidebar-on")
        self.set_class(show is False, "-sidebar-off")
        self.on_resize()

    def watch_busy(self, busy: bool) -> None:
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel_turn":
            return self.busy
        if action == "demo_autoplay":
            return self.demo
        return True

    # ----------------------------------------------------------------- session
    async def on_engine_ready(self, message: msg.EngineReady) -> None:
        if not self.busy:
            self.query_one(TurnStatus).stop()  # "waiting for pid N" after a locked start
        log = self.chat_log
        log.effort_names = {e.id: e.title for e in message.engine.status().efforts}
        if message.history:
            await log.add_divider("earlier in this session")
            await log.add_history(message.history)
            self._seen_ts = message.history[-1].ts
            await log.add_divider("now")
        if message.report.changed:
            await log.add_banner("\n".join(message.report.lines()), "recovery")
        await self.refresh_sidebar(message.figures)
        self.update_hint()
        if self.demo and message.first:
            await self.driver.start(message.engine.turn, log)
        await self._demo_prefill()
        if message.report.orphan is not None:
            self._offer_retry(message.report.orphan.text)
        self.turns.send_pending()

    def on_session_waiting(self, message: msg.SessionWaiting) -> None:
        who = f"pid {message.pid}" if message.pid else "another process"
        if message.attempt == 1:
            text = f"The session is in use by {who}: waiting for it (your message is sent once it is free)."
            self.notify(text, title="Session locked", severity="warning", timeout=10)
        self.query_one(TurnStatus).start(
            f"Waiting for {who} to release the session — retrying in {message.retry_in:g} s", cancellable=False
        )

    async def on_engine_failed(self, message: msg.EngineFailed) -> None:
        self.turns.pending = None
        self.query_one(TurnStatus).stop()
        await self.chat_log.add_banner(f"Cannot open the session: {message.error}", "error")
        self.notify(message.error, title="Cannot open the session", severity="error", timeout=15)

    def _offer_retry(self, text: str) -> None:
        def chosen(choice: str | None) -> None:
            if choice == "retry":
                self.send(text)
            elif choice == "edit":
                self.prompt.set_text(text)

        self.app.push_screen(unanswered_dialog(text), chosen)

    async def on_background_notice(self, message: msg.BackgroundNotice) -> None:
        self.show_figures()
        if message.warning:
            await self.chat_log.add_banner(message.warning, "error")
            self.notify(message.warning, title="No API key", severity="warning", timeout=12)

    async def on_session_changed_on_disk(self, message: msg.SessionChangedOnDisk) -> None:
        """Another process wrote (the host has re-read the session): show what it added."""
        if self.engine is None:
            return
        lines = [line for line in self.engine.recent_lines() if line.ts > self._seen_ts]
        if lines:
            await self.chat_log.add_divider("written by another process")
            await self.chat_log.add_history(lines)
            self._seen_ts = lines[-1].ts
        await self.refresh_sidebar()

    def restart(self, settings: Settings, session_dir: Path, *, demo: bool, llm: ChatModel | None = None) -> None:
        """Switch to another session (the first-run screen starting the demo)."""
        self.demo = demo
        self._show_identity()
        self.chat_log.remove_children()
        self.refresh_bindings()
        self.host.reopen(settings, session_dir, llm, fresh=True)

    def apply_settings(self, settings: Settings) -> bool:
        """Reopen the session with new settings (model, thresholds ...); False if it cannot now."""
        if settings == self.settings:
            return True
        if not self.ready("change settings"):
            return False
        self.host.reopen(settings)
        self._show_identity()
        return True

    # ----------------------------------------------------------------- sidebar
    async def refresh_sidebar(self, figures: te.ContextFigures | None = None) -> None:
        """Efforts, header and meter from the engine (~1 ms; mid-turn too, so the meter moves with the list)."""
        self._sidebar_queued = False
        if self.engine is None:
            return
        status = self.host.status()
        figures = figures or self.host.figures()
        self.chat_log.effort_names = {e.id: e.title for e in status.efforts}
        in_context = figures.efforts if figures is not None else None
        await self.query_one(Sidebar).show_efforts(status.efforts, self.settings.decay_threshold, in_context)
        where = f"▶ {status.active.title}" if status.active else "ambient chat (no active effort)"
        self.query_one(AppHeader).status = f"turn {status.turn}  ·  {where}"
        self.show_figures(figures)

    def queue_sidebar_refresh(self) -> None:
        if not self._sidebar_queued:
            self._sidebar_queued = True
            self.call_after_refresh(self.refresh_sidebar)

    def show_figures(self, figures: te.ContextFigures | None = None) -> None:
        figures = figures or self.host.figures()
        if figures is not None and self.engine is not None:
            self.query_one(Sidebar).meter.show(figures, self.engine.history())

    def on_effort_activated(self, message: msg.EffortActivated) -> None:
        self.efforts.activate(message.effort_id)

    def on_effort_action_requested(self, message: msg.EffortActionRequested) -> None:
        self.efforts.run(message.effort_id, message.action, confirm=message.confirm)

    def on_typing_redirected(self, message: msg.TypingRedirected) -> None:
        self.prompt.focus()
        if message.text:
            self.prompt.insert(message.text)

    def ready(self, what: str) -> bool:
        """The session is open and idle; otherwise say why ``what`` cannot happen now."""
        if self.engine is None:
            self.notify(self.last_error or "The session is still opening…", severity="warning")
            return False
        if self.busy:
            self.notify(f"Wait for the current reply to finish before you {what} (Esc cancels it).", severity="warning")
            return False
        return True

    # ------------------------------------------------------------------- turns
    @property
    def turn(self) -> TurnView | None:
        return self.turns.turn

    def on_prompt_submitted(self, message: msg.PromptSubmitted) -> None:
        self.send(message.text)

    def send(self, text: str) -> None:
        self.turns.send(text)

    @on(msg.TurnMessage)
    async def on_turn_event(self, message: msg.TurnMessage) -> None:
        """Every core event of a turn or an action: the turn runner draws it, the screen keeps the rest current."""
        if isinstance(message.event, te.EffortChanged):
            self.queue_sidebar_refresh()
        elif isinstance(message.event, te.ContextFigures):
            self.show_figures(message.event)
        else:
            await self.turns.apply(message.event)

    async def on_work_ended(self, message: msg.WorkEnded) -> None:
        await self.turns.ended(message.error)
        self.busy = False
        self.update_hint()  # the turn may have found that the model has no tools
        self._seen_ts = now_iso()
        await self.refresh_sidebar()
        await self._demo_prefill()

    def action_cancel_turn(self) -> None:
        self.turns.cancel()

    # ----------------------------------------------------------------- screens
    def action_inspector(self) -> None:
        from .inspector import InspectorScreen

        if self.engine is None:
            self.notify(self.last_error or "The session is still opening…", severity="warning")
            return
        draft = self.prompt.text.strip()
        self.app.push_screen(InspectorScreen(self.engine.inspect(draft), draft=bool(draft)))

    def action_open_effort(self) -> None:
        self.efforts.ask_open()

    def action_search_efforts(self) -> None:
        from textual.command import CommandPalette

        from ..commands import EffortSearch

        self.app.push_screen(CommandPalette(providers=[EffortSearch], placeholder="Search all efforts…"))

    def action_scroll_chat(self, where: str) -> None:
        log = self.chat_log
        {"page_up": log.scroll_page_up, "page_down": log.scroll_page_down, "home": log.scroll_home}.get(
            where, log.scroll_end
        )(animate=False)

    def action_clear_prompt(self) -> None:
        self.prompt.clear()
        self.prompt.focus()

    def action_focus_efforts(self) -> None:
        if not self.sidebar_visible:
            self.show_sidebar = True
        if not self.query_one(Sidebar).focus_effort():
            self.notify("No efforts yet", severity="information")

    def action_toggle_sidebar(self) -> None:
        self.show_sidebar = not self.sidebar_visible

    def action_copy_reply(self) -> None:
        reply = self.chat_log.last_reply()
        if reply:
            self.app.copy_to_clipboard(reply)
            self.notify("Reply copied to the clipboard")

    def action_copy_code(self) -> None:
        code = self.chat_log.last_code_block()
        if code is None:
            self.notify("No code block in the chat yet", severity="warning")
            return
        self.app.copy_to_clipboard(code)
        self.notify("Code block copied to the clipboard")

    # -------------------------------------------------------------------- demo
    async def _demo_prefill(self) -> None:
        if self.demo and not self.busy:
            await self.driver.prefill(self.chat_log)

    def action_demo_autoplay(self) -> None:
        on = self.driver.toggle()
        self.notify("Autoplay on: the demo types and sends by itself" if on else "Autoplay off")
