"""The main screen: chat pane, prompt, live effort sidebar and token meter.

The session lives in a :class:`~ccm_tui.ui.session_host.SessionHost` child; its
messages (turn events, session opened, disk changes, finished work) bubble up
here and update the widgets. This screen draws and dispatches user actions.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import Footer, Static

from ...config import ConfigError, Settings, load_settings, read_config_file
from ...core import turn_events as te
from ...core.eventlog import now_iso
from .. import messages as msg
from ..actions import ACTIONS, is_valid, valid_actions
from ..demo_driver import DemoDriver
from ..session_host import SessionHost
from ..widgets.banner import PauseBanner
from ..widgets.chat_log import ChatLog
from ..widgets.effort_detail import describe
from ..widgets.header import AppHeader
from ..widgets.message import ChatMessage, code_blocks
from ..widgets.prompt_input import PromptInput
from ..widgets.sidebar import Sidebar
from ..widgets.turn_status import TurnStatus
from .choice import Choice, ChoiceDialog
from .prompt import PromptDialog

HINT = "Enter send · Ctrl+J newline · Esc cancel a reply · Ctrl+P all commands"
DEMO_HINT = "DEMO · Enter sends the scripted message (edit it if you like) · F6 autoplay · Ctrl+P all commands"


@dataclass
class RunningTurn:
    """The widgets of the turn being answered."""

    text: str
    user: ChatMessage
    assistant: ChatMessage
    gap: bool = False  # tool calls happened: the next streamed text starts a new paragraph
    round_start: int = 0
    pause: PauseBanner | None = None
    started: bool = False  # the core began the turn (TurnStarted): the message is in the log


class ChatScreen(Screen[None]):
    BINDINGS = [
        Binding("escape", "cancel_turn", "Cancel reply", id="cancel_turn"),
        Binding("f2", "inspector", "Context", id="inspector"),
        Binding("f4", "settings", "Settings", id="settings"),
        Binding("ctrl+o", "open_effort", "Open effort", id="open_effort", priority=True),
        Binding("ctrl+f", "search_efforts", "Search", id="search_efforts", priority=True),
        Binding("ctrl+g", "focus_efforts", "Efforts", id="focus_efforts", priority=True),
        Binding("ctrl+b", "toggle_sidebar", "Sidebar", id="toggle_sidebar", priority=True, show=False),
        Binding("alt+c", "copy_reply", "Copy reply", id="copy_reply", show=False),
        Binding("alt+k", "copy_code", "Copy code", id="copy_code", show=False),
        Binding("f6", "demo_autoplay", "Autoplay", id="demo_autoplay", priority=True),
    ]

    busy: reactive[bool] = reactive(False, init=False)
    show_sidebar: reactive[bool] = reactive(True, init=False)

    def __init__(self, settings: Settings, session_dir: Path, *, demo: bool = False, llm: Any = None,
                 watch: bool = True, warm_up: bool = True, autoplay: bool = False) -> None:
        super().__init__()
        self.demo = demo
        self.host = SessionHost(settings, session_dir, llm=llm, watch=watch, warm_up=warm_up)
        self.driver = DemoDriver(self, autoplay=autoplay)
        self.turn: RunningTurn | None = None
        self._seen_ts = ""
        self._sidebar_queued = False
        self._pending_send: str | None = None
        self.cancel_requested = False  # Escape between Enter and the start of the turn's worker

    @property
    def settings(self) -> Settings:
        return self.host.settings

    @property
    def engine(self) -> Any:
        return self.host.engine

    @property
    def last_error(self) -> str | None:
        return self.host.last_error

    @property
    def prompt(self) -> PromptInput:
        return self.query_one(PromptInput)

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
        self.query_one("#prompt-hint", Static).update(DEMO_HINT if self.demo else HINT)

    def watch_show_sidebar(self, show: bool) -> None:
        self.query_one(Sidebar).display = show

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
        log = self.query_one(ChatLog)
        if message.history:
            await log.add_divider("earlier in this session")
            await log.add_history(message.history)
            self._seen_ts = message.history[-1].ts
            await log.add_divider("now")
        if message.report.changed:
            await log.add_banner("\n".join(message.report.lines()), "recovery")
        await self.refresh_sidebar()
        self.show_figures(message.figures)
        if self.demo and message.first:
            intro = self.driver.start(self.engine.session.state.turn)
            if intro:
                await log.add_banner(intro, "demo")
        await self._demo_prefill()
        if message.report.orphan is not None:
            self._offer_retry(message.report.orphan.text)
        if self._pending_send:
            text, self._pending_send = self._pending_send, None
            self.query_one(TurnStatus).stop()
            self.send(text)

    def on_session_waiting(self, message: msg.SessionWaiting) -> None:
        who = f"pid {message.pid}" if message.pid else "another process"
        if message.attempt == 1:
            self.notify(f"The session is in use by {who}: waiting for it (your message is sent once it is free).",
                        title="Session locked", severity="warning", timeout=10)
        self.query_one(TurnStatus).start(f"Waiting for {who} to release the session — retrying in "
                                         f"{message.retry_in:g} s", cancellable=False)

    async def on_engine_failed(self, message: msg.EngineFailed) -> None:
        self._pending_send = None
        self.query_one(TurnStatus).stop()
        await self.query_one(ChatLog).add_banner(f"Cannot open the session: {message.error}", "error")
        self.notify(message.error, title="Cannot open the session", severity="error", timeout=15)

    def _offer_retry(self, text: str) -> None:
        preview = " ".join(text.split())
        preview = preview[:200] + ("…" if len(preview) > 200 else "")

        def chosen(choice: str | None) -> None:
            if choice == "retry":
                self.send(text)
            elif choice == "edit":
                self.prompt.set_text(text)

        self.app.push_screen(ChoiceDialog("Your last message got no reply", [
            Choice("retry", "Retry now", "send it to the model again", "r"),
            Choice("edit", "Put it back in the input", "edit before sending", "e"),
            Choice("dismiss", "Dismiss", "it stays in the event log", "d"),
        ], text=f"The last run ended before this message was answered:\n\n“{preview}”"), chosen)

    async def on_background_notice(self, message: msg.BackgroundNotice) -> None:
        self.show_figures()
        if message.warning:
            await self.query_one(ChatLog).add_banner(message.warning, "error")
            self.notify(message.warning, title="No API key", severity="warning", timeout=12)

    async def on_session_changed_on_disk(self, message: msg.SessionChangedOnDisk) -> None:
        """Another process wrote (the host has re-read the session): show what it added."""
        from ..history import recent_lines

        lines = [line for line in recent_lines(self.engine.session) if line.ts > self._seen_ts]
        if lines:
            log = self.query_one(ChatLog)
            await log.add_divider("written by another process")
            await log.add_history(lines)
            self._seen_ts = lines[-1].ts
        await self.refresh_sidebar()
        self.show_figures()

    def restart(self, settings: Settings, session_dir: Path, *, demo: bool, llm: Any = None) -> None:
        """Switch to another session (the first-run screen starting the demo)."""
        self.demo = demo
        self._show_identity()
        self.query_one(ChatLog).remove_children()
        self.refresh_bindings()
        self.host.reopen(settings, session_dir, llm, fresh=True)

    def apply_settings(self, settings: Settings) -> None:
        """Reopen the session with new settings (model, thresholds ...)."""
        if settings == self.settings or not self._ready("change settings"):
            return
        self.host.reopen(settings)
        self._show_identity()

    # ----------------------------------------------------------------- sidebar
    def sidebar_efforts(self) -> list[dict[str, Any]]:
        return list(self.query_one(Sidebar).efforts.values())

    async def refresh_sidebar(self) -> None:
        self._sidebar_queued = False
        if self.engine is None:
            return
        status = self.host.status()
        await self.query_one(Sidebar).show_efforts(status["efforts"], self.settings.decay_threshold)
        active = next((e["id"] for e in status["efforts"] if e["active"]), None)
        where = f"active effort  {active}" if active else "no active effort: ambient chat"
        self.query_one(AppHeader).status = f"turn {status['turn']}  ·  {where}"

    def queue_sidebar_refresh(self) -> None:
        if not self._sidebar_queued:
            self._sidebar_queued = True
            self.call_after_refresh(self._refresh_sidebar_and_figures)

    async def _refresh_sidebar_and_figures(self) -> None:
        """An effort changed mid-turn: the meter moves with the sidebar, not only at the end (~1 ms)."""
        await self.refresh_sidebar()
        self.show_figures()

    def show_figures(self, figures: te.ContextFigures | None = None) -> None:
        figures = figures or self.host.figures()
        if figures is not None:
            self.query_one(Sidebar).meter.show(figures, self.engine.session.state.history)

    def on_effort_selected(self, message: msg.EffortSelected) -> None:
        self.query_one(Sidebar).select(message.effort_id)

    def on_effort_activated(self, message: msg.EffortActivated) -> None:
        self.activate_effort(message.effort_id)

    def on_effort_action_requested(self, message: msg.EffortActionRequested) -> None:
        self.run_effort_action(message.effort_id, message.action)

    def activate_effort(self, effort_id: str) -> None:
        """Offer the actions valid for the effort's state."""
        effort = self.host.effort(effort_id)
        if effort is None:
            self.notify(f"There is no effort '{effort_id}'", severity="warning")
            return
        self.query_one(Sidebar).focus_effort(effort_id)
        choices = [Choice(a.name, a.label, a.help, a.key) for a in valid_actions(effort)]

        def chosen(action: str | None) -> None:
            if action:
                self.run_effort_action(effort_id, action)

        self.app.push_screen(ChoiceDialog(f"Effort {effort_id}", choices,
                                          text=describe(effort, self.settings.decay_threshold, keys=False)), chosen)

    # ----------------------------------------------------------------- actions
    def _ready(self, what: str) -> bool:
        if self.engine is None:
            self.notify(self.last_error or "The session is still opening…", severity="warning")
            return False
        if self.busy:
            self.notify(f"Wait for the current reply to finish before you {what} (Esc cancels it).",
                        severity="warning")
            return False
        return True

    def run_effort_action(self, effort_id: str, action: str) -> None:
        if action == "log":
            self.show_log(effort_id)
            return
        if action == "export":
            self.export_effort(effort_id)
            return
        effort = self.host.effort(effort_id)
        if effort is None or not is_valid(effort, action):
            self.notify(f"Cannot {action} '{effort_id}' in its current state", severity="warning")
            return
        if self._ready(action):
            self._start_action(ACTIONS[action].tool, {"id": effort_id}, f"{ACTIONS[action].label} {effort_id}")

    def open_effort(self, name: str) -> None:
        if name.strip() and self._ready("open an effort"):
            self._start_action("open_effort", {"name": name.strip()}, f"Opening {name.strip()}")

    def search_efforts(self, query: str, limit: int) -> list[Any]:
        return self.host.search(query, limit)

    def _start_action(self, tool: str, args: dict[str, str], label: str) -> None:
        self.busy = True
        self.query_one(TurnStatus).start(label, cancellable=tool == "close_effort")
        self.host.run_action(tool, args)

    def show_log(self, effort_id: str) -> None:
        from ...core.store import read_jsonl
        from .log_viewer import EffortLogScreen

        effort = self.host.effort(effort_id)
        if effort is None:
            return
        result = read_jsonl(self.engine.session.effort_path(effort_id))

        def closed(choice: str | None) -> None:
            if choice == "export":
                self.export_effort(effort_id)

        self.app.push_screen(EffortLogScreen(effort, result.records, len(result.bad_lines)), closed)

    def export_effort(self, effort_id: str) -> None:
        from ..export import export_effort

        def chosen(target: str | None) -> None:
            if not target or self.engine is None:
                return
            try:
                path = export_effort(self.engine.session, effort_id, Path(target))
            except (OSError, StopIteration) as exc:
                self.notify(f"Export failed: {exc}", severity="error")
                return
            self.notify(f"Exported to {path}", title="Export")

        self.app.push_screen(PromptDialog(f"Export {effort_id} to Markdown", value=str(Path.cwd() / f"{effort_id}.md"),
                                          help="A file path, or a directory (the file is then <id>.md)."), chosen)

    # ------------------------------------------------------------------- turns
    @on(msg.PromptSubmitted)
    def on_prompt_submitted(self, message: msg.PromptSubmitted) -> None:
        self.send(message.text)

    def send(self, text: str) -> None:
        if self.engine is None and self.last_error is None:
            self._pending_send = text  # sent as soon as the session is open
            if self.host.waiting:
                self.host.retry_now()
            else:
                self.query_one(TurnStatus).start("Opening the session — your message is sent next", cancellable=False)
            return
        if not self._ready("send another message"):
            return
        if self.engine.orchestrator.llm is None:
            self.notify("No model is configured: open Settings (F4) or start with --model.", severity="warning")
            self.app.show_welcome()
            return
        if self.prompt.text.strip() == text.strip():
            self.prompt.clear()
        if self.demo:
            self.driver.sent(text)
        self.busy = True
        self.call_next(self._begin_turn, text)

    async def _begin_turn(self, text: str) -> None:
        if self.cancel_requested:
            self.cancel_requested = False
            self.busy = False
            self._give_back(text)
            return
        log = self.query_one(ChatLog)
        user = await log.add_message("user", text)
        assistant = await log.add_message("assistant", streaming=True)
        assistant.add_class("-waiting")
        log.scroll_end(animate=False)
        self.turn = RunningTurn(text, user, assistant)
        self.query_one(TurnStatus).start("Thinking")
        self.host.run_turn(text)

    def on_turn_started_message(self, message: msg.TurnStartedMessage) -> None:
        if self.turn is not None:
            self.turn.started = True

    def _give_back(self, text: str) -> None:
        """A message cancelled before its turn began: back in the input (and in the demo's script)."""
        if not self.prompt.text.strip():
            self.prompt.set_text(text)
        if self.demo:
            self.driver.unsent(text)

    async def on_text_delta_message(self, message: msg.TextDeltaMessage) -> None:
        turn = self.turn
        if turn is None:
            return
        piece = message.event.text
        if turn.gap and turn.assistant.text.strip():
            piece = "\n\n" + piece.lstrip()
        turn.gap = False
        if turn.pause is not None:
            turn.pause.resolve("resumed")
            turn.pause = None
        self.query_one(TurnStatus).set_label("Writing")
        await turn.assistant.append(piece)

    def on_tool_called_message(self, message: msg.ToolCalledMessage) -> None:
        if self.turn is not None:
            self.turn.assistant.add_tool(message.event.name, message.event.ok)
            self.turn.gap = True
            self.turn.round_start = len(self.turn.assistant.text)

    async def on_round_reset_message(self, message: msg.RoundResetMessage) -> None:
        if self.turn is not None:
            await self.turn.assistant.replace_text(self.turn.assistant.text[: self.turn.round_start])

    async def on_banner_message(self, message: msg.BannerMessage) -> None:
        before = self.turn.assistant if self.turn is not None else None
        await self.query_one(ChatLog).add_banner(message.event.text, message.event.kind, before=before)

    def on_effort_changed_message(self, message: msg.EffortChangedMessage) -> None:
        self.queue_sidebar_refresh()

    def on_context_figures_message(self, message: msg.ContextFiguresMessage) -> None:
        self.show_figures(message.event)

    async def on_paused_message(self, message: msg.PausedMessage) -> None:
        event = message.event
        if self.turn is None:
            return
        if self.turn.pause is not None:
            self.turn.pause.resolve("retrying")
        self.turn.pause = PauseBanner(event.reason, event.resume_at, event.attempt)
        await self.query_one(ChatLog).add(self.turn.pause, before=self.turn.assistant)
        self.query_one(TurnStatus).set_label("Paused by the provider")

    def on_resumed_message(self, message: msg.ResumedMessage) -> None:
        if self.turn is not None and self.turn.pause is not None:
            self.turn.pause.resolve("resumed")
            self.turn.pause = None
            self.query_one(TurnStatus).set_label("Thinking")

    async def on_turn_done_message(self, message: msg.TurnDoneMessage) -> None:
        if self.turn is not None:
            reply = message.event.reply or self.turn.assistant.text
            await self.turn.assistant.finish(reply or "*(no reply)*", logged_to=message.event.logged_to)

    async def on_turn_cancelled_message(self, message: msg.TurnCancelledMessage) -> None:
        if self.turn is not None:
            assistant = self.turn.assistant
            await assistant.finish(assistant.text or message.event.partial, note="(interrupted)")
            if self.turn.pause is not None:
                self.turn.pause.resolve("cancelled")

    async def on_turn_failed_message(self, message: msg.TurnFailedMessage) -> None:
        await self._fail_turn(message.event.message)

    async def _fail_turn(self, error: str) -> None:
        turn, self.turn = self.turn, None
        if turn is not None:
            if turn.assistant.text.strip():
                await turn.assistant.finish(note="(failed)")
            else:
                await turn.assistant.remove()
            if turn.pause is not None:
                turn.pause.resolve("gave up")
            turn.user.add_class("-unanswered")
            if not self.prompt.text.strip():
                self.prompt.set_text(turn.text)
        await self.query_one(ChatLog).add_banner(
            f"The reply failed: {error} — your message is back in the input.", "error")
        self.notify(error, title="The reply failed", severity="error", timeout=10)

    async def on_work_ended(self, message: msg.WorkEnded) -> None:
        if message.error and self.turn is not None:
            await self._fail_turn(message.error)
        turn, self.turn = self.turn, None
        if turn is not None and not turn.started:  # cancelled before the core began it: nothing was sent
            await turn.assistant.remove()
            turn.user.add_class("-unanswered")
            self._give_back(turn.text)
            turn = None
        if turn is not None and turn.assistant.streaming:
            await turn.assistant.finish(note="(interrupted)")
        self.query_one(TurnStatus).stop()
        self.busy = False
        self._seen_ts = now_iso()
        await self.refresh_sidebar()
        self.show_figures()
        await self._demo_prefill()

    def action_cancel_turn(self) -> None:
        if self.busy:
            if self.turn is None and self.host.running is None:
                self.cancel_requested = True  # Enter was pressed but the turn has not begun yet
            self.host.cancel()
            self.query_one(TurnStatus).set_label("Cancelling")

    # ----------------------------------------------------------------- screens
    def action_inspector(self) -> None:
        from .inspector import InspectorScreen

        if self.engine is None:
            self.notify(self.last_error or "The session is still opening…", severity="warning")
            return
        draft = self.prompt.text.strip()
        orchestrator = self.engine.orchestrator
        context = orchestrator.working_context([{"role": "user", "content": draft}] if draft else [])
        self.app.push_screen(InspectorScreen(context, orchestrator.tool_defs, orchestrator.budget,
                                             self.engine.session.counter, draft=bool(draft)))

    def action_settings(self) -> None:
        from .settings import SettingsScreen

        try:
            saved = read_config_file()
        except ConfigError as exc:
            self.notify(f"{exc}", title="The config file is broken", severity="error", timeout=15)
            return
        self.app.push_screen(SettingsScreen(self.settings, saved), self._settings_saved)

    def _settings_saved(self, values: dict[str, Any] | None) -> None:
        if not values:
            return
        if values.get("theme"):
            self.app.theme = values["theme"]
        if self.demo:
            self.notify("Saved. The demo keeps its scripted model; start ccm-tui without 'demo' to use yours.",
                        title="Settings")
            return
        try:
            fresh = load_settings()
        except ConfigError as exc:
            self.notify(f"{exc}", title="The config file is broken", severity="error", timeout=15)
            return
        flags = {k: getattr(self.settings, k) for k, source in self.settings.sources.items() if source == "command line"}
        self.notify("Settings saved", title="Settings")
        self.apply_settings(fresh.with_overrides("command line", **flags))

    def action_switch_model(self) -> None:
        if self.demo:
            self.notify("The demo runs its scripted model only.", severity="warning")
            return

        def chosen(model: str | None) -> None:
            if model:
                self.apply_settings(replace(self.settings, model=model))
                self.notify(f"Using {model} for this run (save it in Settings to keep it)", title="Model")

        self.app.push_screen(PromptDialog("Switch model", value=self.settings.model or "",
                                          placeholder="provider/model, e.g. openai/gpt-4o-mini"), chosen)

    def action_open_effort(self) -> None:
        self.app.push_screen(PromptDialog("Open a new effort", placeholder="a short name, e.g. auth bug",
                                          help="It becomes the active effort: new messages go to it."),
                             lambda name: self.open_effort(name) if name else None)

    def action_search_efforts(self) -> None:
        from textual.command import CommandPalette

        from ..commands import EffortSearch

        self.app.push_screen(CommandPalette(providers=[EffortSearch], placeholder="Search all efforts…"))

    def action_focus_efforts(self) -> None:
        self.show_sidebar = True
        if not self.query_one(Sidebar).focus_effort():
            self.notify("No efforts yet", severity="information")

    def action_toggle_sidebar(self) -> None:
        self.show_sidebar = not self.show_sidebar

    def action_copy_reply(self) -> None:
        replies = self.query_one(ChatLog).messages("assistant")
        if replies and replies[-1].text:
            self.app.copy_to_clipboard(replies[-1].text)
            self.notify("Reply copied to the clipboard")

    def action_copy_code(self) -> None:
        for message in reversed(self.query_one(ChatLog).messages()):
            blocks = code_blocks(message.text)
            if blocks:
                self.app.copy_to_clipboard(blocks[-1])
                self.notify("Code block copied to the clipboard")
                return
        self.notify("No code block in the chat yet", severity="warning")

    # -------------------------------------------------------------------- demo
    async def _demo_prefill(self) -> None:
        if self.demo and not self.busy:
            outro = self.driver.prefill()
            if outro:
                await self.query_one(ChatLog).add_banner(outro, "demo")

    def action_demo_autoplay(self) -> None:
        on = self.driver.toggle()
        self.notify("Autoplay on: the demo types and sends by itself" if on else "Autoplay off")
