"""The main screen: chat pane, prompt, live effort sidebar and token meter.

The :class:`~ccm_tui.ui.session_link.SessionLink` child links the screen to its
session controller; the controller's events arrive here as messages and the
screen draws them: the run state (status line, bindings), snapshots of the
session (sidebar, meter, header), turns (through its
:class:`~ccm_tui.ui.turn_presenter.TurnPresenter`). Intents go back through the link.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.reactive import reactive
from textual.widgets import Footer

from ...config import Settings
from ...core.api import END_OF_CHAT, LoggedLine, Phase, RunState, SessionSnapshot, completions, terminal_safe
from ...core.api import turn_events as te
from .. import messages as msg
from ..controller_link import SessionLink
from ..demo_driver import DemoDriver
from ..effort_menu import EffortActions
from ..keys import CHAT_BINDINGS
from ..turn_presenter import TurnPresenter
from ..widgets.chat_log import ChatLog
from ..widgets.header import AppHeader
from ..widgets.prompt_hint import PromptHint
from ..widgets.prompt_input import PromptInput
from ..widgets.sidebar import Sidebar
from ..widgets.turn_status import TurnStatus
from .chat_turns import ChatTurns

UNANSWERED_HINT = "Your last message got no reply — Ctrl+Y sends it again · ↑ brings it back to edit"
if TYPE_CHECKING:
    from ...core.api import ChatModel, Proposal

NARROW_BELOW = 90  # columns
WIDE_FROM = 120


def _who(pid: int | None) -> str:
    return f"pid {pid}" if pid else "another process"


class ChatScreen(ChatTurns):
    BINDINGS = CHAT_BINDINGS

    # -wide: full sidebar; -medium: a narrower one; -narrow: the sidebar is hidden until Ctrl+B
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (NARROW_BELOW, "-medium"), (WIDE_FROM, "-wide")]

    run_state: reactive[RunState] = reactive(RunState, init=False)  # the controller's, as last told
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
        typed: str = "",
    ) -> None:
        super().__init__()
        self.demo = demo
        self.typed_ahead = typed  # keys typed before the app held the terminal: they go to the input
        self.link = SessionLink(settings, session_dir, llm=llm, watch=watch, warm_up=warm_up)
        self.driver = DemoDriver(self, autoplay=autoplay)
        self.suggestion: Proposal | None = None  # the app's effort proposal on offer (Ctrl+Y)
        self.unanswered: str | None = None  # a crashed run's unanswered message, on offer (Ctrl+Y resends it)

    @property
    def settings(self) -> Settings:
        return self.link.settings

    @property
    def snapshot(self) -> SessionSnapshot | None:
        return self.link.snapshot

    @property
    def busy(self) -> bool:
        """A reply (or an action) runs or waits to run."""
        return self.run_state.busy

    @property
    def status_line(self) -> TurnStatus:
        return self.query_one(TurnStatus)

    # ------------------------------------------------------------------ layout
    def compose(self) -> ComposeResult:
        yield self.link
        yield AppHeader(id="header")
        with Horizontal(id="body"):
            with Vertical(id="chat-pane"):
                yield ChatLog(id="chat-log")
                yield TurnStatus(id="turn-status")
                yield PromptInput(
                    id="prompt", placeholder="Message the model…  (/ for commands)", completer=self.complete_command
                )
                yield PromptHint(demo=self.demo, id="prompt-hint")
            yield Sidebar(id="sidebar")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.efforts = EffortActions(self.app, self.link, self.query_one(Sidebar).focus_effort)
        self.turns = TurnPresenter(self.chat_log, self.give_back, self.notify)
        self._show_identity()
        self.prompt.use_session(self.link.session_dir, restore_draft=not self.demo)
        self.prompt.focus()
        self._take_typed_ahead()
        self.call_after_refresh(self.link.open)  # the core loads after the first paint
        self.set_interval(0.05, self.driver.tick)

    def _take_typed_ahead(self) -> None:
        """What was typed before the app held the terminal goes where keys go: each line ended by
        Enter is sent (after the first frame), the rest is in the input."""
        text = self.typed_ahead.replace("\r\n", "\n").replace("\r", "\n")
        self.typed_ahead = ""
        text = terminal_safe(text)  # arrow keys and other escape sequences are not text
        *lines, rest = text.split("\n")
        if rest:
            self.prompt.insert(rest)
        for line in lines:
            if line.strip():
                self.call_after_refresh(self.send, line)

    def _show_identity(self, session_dir: Path | None = None, settings: Settings | None = None) -> None:
        """The header's session and model (``session_dir``, ``settings``: the ones being opened or
        applied, before the reopen takes them)."""
        header = self.query_one(AppHeader)
        header.session_name = "demo" if self.demo else (session_dir or self.link.session_dir).name
        header.model = (settings or self.settings).model or ""
        header.demo = self.demo
        self.on_resize()

    @property
    def sidebar_visible(self) -> bool:
        return self.show_sidebar if self.show_sidebar is not None else self.size.width >= NARROW_BELOW

    def on_resize(self) -> None:
        self.update_hint()

    def complete_command(self, typed: str) -> list[str]:
        snapshot = self.snapshot
        return completions(typed, [e.id for e in snapshot.status.efforts] if snapshot is not None else [])

    def on_text_area_changed(self, event: PromptInput.Changed) -> None:
        """While a slash command is typed, the line under the prompt shows the commands it may be."""
        if isinstance(event.text_area, PromptInput):
            self.update_hint()

    def update_hint(self) -> None:
        """The line under the prompt (see :class:`~ccm_tui.ui.widgets.prompt_hint.PromptHint`)."""
        if not self.is_mounted:
            return
        snapshot = self.snapshot
        offer = self.suggestion.text if self.suggestion is not None else None
        if self.unanswered is not None:
            offer = UNANSWERED_HINT
        self.query_one(PromptHint).show(
            typed=self.prompt.text,
            proposal=offer,
            no_tools=snapshot is not None and snapshot.has_model and not snapshot.tools_enabled,
            sidebar_visible=self.sidebar_visible,
            cancellable=self.run_state.cancellable or bool(self.run_state.queued),
            demo_done=self.demo and self.driver.finished,
        )

    def watch_show_sidebar(self, show: bool | None) -> None:
        self.set_class(show is True, "-sidebar-on")
        self.set_class(show is False, "-sidebar-off")
        self.on_resize()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "accept_suggestion":
            return self.suggestion is not None or self.unanswered is not None
        if action == "cancel_turn":
            return self.run_state.cancellable or bool(self.run_state.queued)
        if action == "demo_autoplay":
            return self.demo
        return True

    # ----------------------------------------------------------------- session
    async def on_run_state_changed(self, message: msg.RunStateChanged) -> None:
        """The status line and the bindings follow the controller's run state."""
        idle_again = message.state.phase is Phase.IDLE and self.run_state.busy
        self.show_run_state(message.state)
        if idle_again:
            await self._demo_prefill()

    def show_run_state(self, state: RunState) -> None:
        self.run_state = state
        self.refresh_bindings()
        self.update_hint()  # (it says Esc cancels only while there is something to cancel)
        status = self.status_line
        phase = state.phase
        if phase is Phase.OPENING:
            if state.queued:
                status.start("Opening the session — your message is sent next", cancellable=False)
        elif phase is Phase.LOCKED and state.work is None:
            waiting = f"Waiting for {_who(state.holder)} to release the session"
            if state.retry_in is not None:
                waiting += f" — retrying in {state.retry_in:g} s"
            status.start(waiting, cancellable=False)
            if state.attempt == 1:
                self.notify(
                    f"The session is in use by {_who(state.holder)}: waiting for it (your message is sent once "
                    "it is free).",
                    title="Session locked",
                    severity="warning",
                    timeout=10,
                )
        elif phase is Phase.LOCKED:
            status.set_label(state.detail[:1].upper() + state.detail[1:])
        elif phase is Phase.TURN and not status.running:
            status.start("Thinking")
        elif phase is Phase.ACTION:
            status.start(state.detail[:1].upper() + state.detail[1:], cancellable=state.detail.startswith("conclude"))
        elif phase is Phase.CANCELLING:
            status.set_label("Cancelling")
        elif phase in (Phase.IDLE, Phase.CLOSED):
            status.stop()

    async def on_session_opened(self, message: msg.SessionOpened) -> None:
        log = self.chat_log
        if message.history:
            await log.add_divider("earlier in this session")
            await log.add_history(list(message.history), start=True)
            await log.add_divider("now")
        if message.report.changed:
            await log.add_banner("\n".join(message.report.lines()), "recovery")
        self.update_hint()
        if self.demo and message.first:
            await self.driver.start(self.snapshot.turn if self.snapshot else 0, log)
        await self._demo_prefill()
        if message.report.orphan is not None:
            self._offer_retry(message.report.orphan.text)

    async def on_open_failed(self, message: msg.OpenFailed) -> None:
        self.status_line.stop()
        await self.chat_log.add_banner(f"Cannot open the session: {message.error}", "error")
        self.notify(message.error, title="Cannot open the session", severity="error", timeout=15)

    async def on_notice_message(self, message: msg.NoticeMessage) -> None:
        await self.chat_log.add_banner(message.text, "error")
        self.notify(message.text, title=message.title or "Note", severity="warning", timeout=12)

    def on_chat_log_need_older(self, message: ChatLog.NeedOlder) -> None:
        """Scrolled to the top: the page said before the oldest line shown comes from the session."""
        log = self.chat_log
        if self.is_open and log.oldest is not None and not log.loading_older:
            log.loading_older = True
            self.run_worker(self._older(log.oldest), group="older", exclusive=True, exit_on_error=False)

    async def _older(self, before: LoggedLine) -> None:
        log = self.chat_log
        try:
            page = await self.link.controller.older_lines(before)
            await log.add_older(list(page.lines), page.more)
        except Exception as exc:  # noqa: BLE001 - an unreadable log must not end the app
            self.notify(f"Could not read earlier chat: {exc}", severity="warning")
        finally:
            log.loading_older = False  # (only once drawn: one step of scrolling back at a time)

    def on_chat_log_need_newest(self, message: ChatLog.NeedNewest) -> None:
        """Back at the bottom after the newest lines were let go: the newest page comes again."""
        if self.is_open:
            self.run_worker(self._newest(), group="older", exclusive=True, exit_on_error=False)

    async def _newest(self) -> None:
        try:
            page = await self.link.controller.older_lines(END_OF_CHAT)
        except Exception as exc:  # noqa: BLE001 - an unreadable log must not end the app
            self.notify(f"Could not read the chat: {exc}", severity="warning")
            return
        await self.chat_log.show_newest(list(page.lines))

    async def on_written_elsewhere(self, message: msg.WrittenElsewhere) -> None:
        """Another process wrote (the controller has re-read the session): show what it added. An offer
        made before no longer describes the conversation."""
        self._drop_suggestion()
        if message.lines:
            await self.chat_log.add_divider("written by another process")
            await self.chat_log.add_history(list(message.lines))

    def restart(self, settings: Settings, session_dir: Path, *, demo: bool, llm: ChatModel | None = None) -> None:
        """Switch to another session (the first-run screen starting the demo, the session picker)."""
        self.demo = demo
        self.query_one(PromptHint).demo = demo
        self.chat_log.clear()
        self.refresh_bindings()
        self.run_worker(self.link.reopen(settings, session_dir, llm), group="session-switch", exit_on_error=False)
        self.prompt.use_session(session_dir, restore_draft=not demo)
        self._show_identity(session_dir, settings)

    def apply_settings(self, settings: Settings) -> bool:
        """Reopen the session with new settings (model, thresholds ...); False if it cannot now."""
        if settings == self.settings:
            return True
        if not self.efforts.ready("change settings"):
            return False
        self.run_worker(self.link.reopen(settings), group="session-switch", exit_on_error=False)
        self._show_identity(settings=settings)  # the reopen takes them in its worker, later
        return True

    # ----------------------------------------------------------------- sidebar
    async def on_snapshot_changed(self, message: msg.SnapshotChanged) -> None:
        """Efforts, header and meter from the controller's newest snapshot."""
        snapshot = message.snapshot
        status = snapshot.status
        self.chat_log.effort_names = {e.id: e.title for e in status.efforts}
        await self.query_one(Sidebar).show_efforts(
            status.efforts, self.settings.decay_threshold, snapshot.figures.efforts, status.unlisted
        )
        where = f"▶ {status.active.title}" if status.active else "ambient chat (no active effort)"
        self.query_one(AppHeader).status = f"turn {status.turn}  ·  {where}"
        self.show_figures(snapshot.figures)
        self.update_hint()

    def show_figures(self, figures: te.ContextFigures) -> None:
        snapshot = self.snapshot
        self.query_one(Sidebar).meter.show(
            figures, list(snapshot.history) if snapshot else [], snapshot.session_usage if snapshot else None
        )

    def on_effort_activated(self, message: msg.EffortActivated) -> None:
        self.efforts.activate(message.effort_id)

    def on_effort_action_requested(self, message: msg.EffortActionRequested) -> None:
        self.efforts.run(message.effort_id, message.action, confirm=message.confirm)

    def on_typing_redirected(self, message: msg.TypingRedirected) -> None:
        self.prompt.focus()
        if message.text:
            self.prompt.insert(message.text)

    # -------------------------------------------------------------------- demo
    async def _demo_prefill(self) -> None:
        if self.demo and not self.busy:
            await self.driver.prefill(self.chat_log)
