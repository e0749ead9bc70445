"""The main screen: chat pane, prompt, live effort sidebar and token meter.

The :class:`~ccm_tui.ui.controller_link.SessionLink` child links the screen to its
session controller; the controller's events arrive here as messages and the
screen draws them: the run state (status line, bindings), snapshots of the
session (sidebar, meter, header), turns (through its
:class:`~ccm_tui.ui.turn_presenter.TurnPresenter`). Intents go back through the link:
messages and slash commands sent, and what the keys and the command palette ask
(every action here is also in ``ui/palette.py``, its key in ``ui/keys.py``).

What needs no screen is in the collaborators it owns: the offers under the input
(:class:`~ccm_tui.ui.offers.Offers`), finding text in the chat
(:class:`~ccm_tui.ui.chat_find.ChatFind`), the effort menus
(:class:`~ccm_tui.ui.effort_menu.EffortActions`) and the demo
(:class:`~ccm_tui.ui.demo_driver.DemoDriver`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from textual import events, on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import Footer, Static

from ...config import Settings, sessions_dir
from ...core.api import (
    COMMANDS,
    END_OF_CHAT,
    ContextFigures,
    EffortChanged,
    LoggedLine,
    Outcome,
    Phase,
    RunState,
    SessionSnapshot,
    SlashCommand,
    SlashError,
    completions,
    spec_of,
    terminal_safe,
)
from ...core.api import parse as parse_message
from .. import messages as msg
from ..chat_find import ChatFind
from ..controller_link import SessionLink
from ..demo_driver import DemoDriver
from ..effort_menu import EffortActions
from ..keys import CHAT_BINDINGS
from ..offers import Offers, stales_an_offer
from ..turn_presenter import TurnPresenter
from ..widgets.chat_log import ChatLog, line_of
from ..widgets.command_result import CommandResult
from ..widgets.header import AppHeader
from ..widgets.prompt_hint import PromptHint
from ..widgets.prompt_input import PromptInput
from ..widgets.sidebar import Sidebar
from ..widgets.turn_status import TurnStatus

if TYPE_CHECKING:
    from ...core.api import ChatModel, Proposal

START_LINES = 120  # lines drawn from where a jump back in time lands (the pane keeps a few screens)
NARROW_BELOW = 90  # columns
WIDE_FROM = 120


_GLUED = re.compile(r"(?:^|\s)[^\s/.:]*/(?P<word>[A-Za-z]+)(?P<rest>\s+\S.*)?$")


def glued_command(text: str) -> str | None:
    """A slash command that would be sent as chat because text came before it: ``/status`` at the end
    of the words before it (``tell me a joke/status``, ``… for Kyoto /status``), or at the start of a
    line after the first. None when there is none: a path or a URL (``x.com/help``) is not one, nor a
    command word given what it does not take (``/status endpoint``)."""
    specs = {name: spec for spec in COMMANDS for name in (spec.name, *spec.aliases)}
    lines = text.strip().splitlines()
    for line in lines[1:]:
        word = line.strip()[1:].split(" ", 1)[0].casefold() if line.strip().startswith("/") else ""
        if word in specs:
            return "/" + word
    found = _GLUED.search(lines[-1]) if len(lines) > 1 or not text.lstrip().startswith("/") else None
    spec = specs.get(found["word"].casefold()) if found is not None else None
    if found is None or spec is None or (bool(found["rest"]) != bool(spec.argument) and "[" not in spec.argument):
        return None
    return "/" + found["word"].casefold()


def _who(pid: int | None) -> str:
    return f"pid {pid}" if pid else "another process"


class ChatScreen(Screen[None]):
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
        self.offers = Offers(self._offers_changed)  # on the line under the input, taken by Ctrl+Y
        self._glue_warned: str | None = None  # a message refused for a glued command (sent if Enter again)

    @property
    def settings(self) -> Settings:
        return self.link.settings

    @property
    def snapshot(self) -> SessionSnapshot | None:
        return self.link.snapshot

    @property
    def session_dir(self) -> Path:
        return self.link.session_dir

    @property
    def busy(self) -> bool:
        """A reply (or an action) runs or waits to run."""
        return self.run_state.busy

    @property
    def is_open(self) -> bool:
        return self.run_state.is_open

    @property
    def suggestion(self) -> Proposal | None:
        """The app's effort proposal on offer (Ctrl+Y takes it)."""
        return self.offers.suggestion

    @property
    def unanswered(self) -> str | None:
        """A crashed run's unanswered message on offer (Ctrl+Y sends it again)."""
        return self.offers.unanswered

    @property
    def prompt(self) -> PromptInput:
        return self.query_one(PromptInput)

    @property
    def chat_log(self) -> ChatLog:
        return self.query_one(ChatLog)

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
        self.efforts = EffortActions(
            self.app, self.link, self.query_one(Sidebar).focus_effort, self.show_lines, self.jump_to_effort_start
        )
        self.turns = TurnPresenter(self.chat_log, self.give_back, self.notify)
        self.finder = ChatFind(self.chat_log)
        self._show_identity()
        self.prompt.use_session(self.link.session_dir, restore_draft=not self.demo)
        self.prompt.focus()
        self._take_typed_ahead()
        self.call_after_refresh(self.app.post_message, msg.ChatInputReady())  # after the lines typed ahead
        self.call_after_refresh(self.link.open)  # the core loads after the first paint
        self.set_interval(0.05, self.driver.tick)

    def _take_typed_ahead(self) -> None:
        """What was typed before the app held the terminal goes where keys go: each line ended by
        Enter is sent (after the first frame), the rest is in the input. The keys the app held since
        (``ui/startup_keys.py``) come after these."""
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
        self.query_one(PromptHint).show(
            typed=self.prompt.text,
            proposal=self.offers.hint,
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
            return self.offers.any
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

    async def on_session_ready(self, message: msg.SessionReady) -> None:
        log = self.chat_log
        if message.history:  # above what was drawn meanwhile (a command asked for as the session opened)
            present = log.children[0] if log.children else None
            await log.add(Static("earlier in this session", classes="divider", markup=False), before=present)
            await log.add_history(list(message.history), start=True, before=present)
            await log.add(Static("now", classes="divider", markup=False), before=present)
        if message.report.changed:
            await log.add_banner("\n".join(message.report.lines()), "recovery")
        self.update_hint()
        if self.demo and message.first:
            await self.driver.start(self.snapshot.turn if self.snapshot else 0, log)
        await self._demo_prefill()
        if message.report.orphan is not None:
            self._offer_retry(message.report.orphan.text)

    def _offer_retry(self, text: str) -> None:
        """A crashed run left this message unanswered: offered on the line under the input (Ctrl+Y sends it
        again, Up brings it back to edit)."""
        self.prompt.remind(text)
        self.offers.offer_retry(text)

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

    async def on_changed_elsewhere(self, message: msg.ChangedElsewhere) -> None:
        """Another process wrote (the controller has re-read the session): show what it added. An offer
        made before no longer describes the conversation."""
        self.offers.drop_suggestion()
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
    async def on_snapshot_arrived(self, message: msg.SnapshotArrived) -> None:
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

    def show_figures(self, figures: ContextFigures) -> None:
        snapshot = self.snapshot
        self.query_one(Sidebar).meter.show(
            figures, list(snapshot.history) if snapshot else [], snapshot.session_usage if snapshot else None
        )

    def on_effort_activated(self, message: msg.EffortActivated) -> None:
        self.efforts.activate(message.effort_id)

    def on_effort_action_requested(self, message: msg.EffortActionRequested) -> None:
        self.efforts.run(message.effort_id, message.action, confirm=message.confirm)

    def on_typing_redirected(self, message: msg.TypingRedirected) -> None:
        """Typing (or Esc) on the effort list: the input takes the focus at once, so the next keys of a
        burst go to it, after this one."""
        self.set_focus(self.prompt)
        if message.text:
            self.prompt.insert(message.text)
        elif message.key == "enter":
            self.prompt.action_submit()
        elif message.key:
            self.prompt.post_message(events.Key(message.key, None))

    # ----------------------------------------------------------------- sending
    def on_prompt_submitted(self, message: msg.PromptSubmitted) -> None:
        self.send(message.text, typed=message.typed, pastes=message.pastes)

    def send(self, text: str, *, typed: str | None = None, pastes: dict[int, str] | None = None) -> None:
        """Enter: a slash command runs at once; anything else is a message for the model. The input
        gave the text up already; what cannot be sent now comes back to it (``typed``, ``pastes``: as the
        input showed it)."""
        typed = text if typed is None else typed
        try:
            intent = parse_message(text)
        except SlashError as exc:
            self.notify(str(exc), title="Not a command", severity="warning")
            self._not_sent(typed, pastes)
            return
        if isinstance(intent, SlashCommand):
            if not self.run_command(intent):
                self._not_sent(typed, pastes)
            return
        glued = glued_command(text)
        if glued is not None and text != self._glue_warned:
            self._glue_warned = text  # the same text again: sent as it is, as meant
            self.notify(
                f"{glued} is glued to the text before it: not sent. Enter again sends it all as chat; a "
                "command goes alone on its line.",
                title="Not sent",
                severity="warning",
                timeout=10,
            )
            self._not_sent(typed, pastes)
            return
        self._glue_warned = None
        self.send_message(intent.text, typed=typed, pastes=pastes)

    def _not_sent(self, typed: str, pastes: dict[int, str] | None) -> None:
        """A message that could not be sent goes back into the input, unless something else was typed
        since: then Up brings it back (it is in the input's history)."""
        if not self.prompt.give_back(typed, pastes):
            self.notify("It was not sent; ↑ in an empty input brings it back.", severity="information", timeout=6)

    def run_command(self, command: SlashCommand) -> bool:
        """Run a slash command (its line and answer in the chat); False when it cannot run now."""
        if spec_of(command).action is not None and not self.efforts.ready(command.line):
            return False
        if not self.is_open:
            self.notify(self.run_state.error or "The session is still opening…", severity="warning")
            return False
        view = CommandResult(command.line)
        self.run_worker(self._command(command, view), group="command", exit_on_error=False)
        return True

    async def _command(self, command: SlashCommand, view: CommandResult) -> None:
        await self.chat_log.add(view)
        self.chat_log.scroll_end(animate=False)
        outcome = await self.link.controller.command(command)
        report = (outcome.result or {}).get("report") if outcome.ok else None
        view.show(outcome.reply if outcome.ok else outcome.reason, failed=not outcome.ok, report=report)
        self.chat_log.scroll_end(animate=False)

    def send_message(
        self, text: str, *, typed: str | None = None, pastes: dict[int, str] | None = None, retry: bool = False
    ) -> None:
        """Send ``text`` to the model (``typed``: as the input showed it, with ``pastes`` folded;
        ``retry``: it is the crashed run's unanswered message, sent again)."""
        typed = text if typed is None else typed
        state = self.run_state
        if state.phase is Phase.CLOSED and state.error:
            self.notify(state.error, severity="warning")
            self._not_sent(typed, pastes)
            return
        snapshot = self.snapshot
        if state.is_open and snapshot is not None and not snapshot.has_model:
            self.notify("No model is configured: open Settings (F4) or start with --model.", severity="warning")
            self._not_sent(typed, pastes)
            self.post_message(msg.ShowWelcome())
            return
        if self.demo:
            self.driver.sent(text)
        self.offers.withdraw()  # not taken: moved on
        queued = state.busy or not state.is_open
        self.turns.begin(text, queued=queued, typed=typed, pastes=pastes)  # on screen at once, sent in turn
        if retry:
            self.link.retry_orphan()  # the controller checks that it is still unanswered
        else:
            self.link.send(text)  # the controller runs it, or queues it until the session is open

    def give_back(self, text: str, typed: str | None = None, pastes: dict[int, str] | None = None) -> bool:
        """A message that got no answer: back in the input as it was typed (and in the demo's script),
        selected, so that typing replaces it (arrows, Home or End keep it to edit; a message taken back to
        edit, ``typed`` None, is not selected). False when it could
        not come back: something else was typed meanwhile (↑ brings it back)."""
        back, editing = False, typed is None
        if not self.prompt.text.strip():
            if typed is None:  # a whole message back (edit the last one): folded if it is long
                typed, pastes = self.prompt.pastes.fold(text), dict(self.prompt.pastes.texts)
            back = self.prompt.give_back(typed, pastes, selected=not editing)
        if self.demo:
            self.driver.unsent(text)
        return back

    @on(msg.TurnMessage)
    async def on_turn_event(self, message: msg.TurnMessage) -> None:
        """Every core event of a turn or an action: the presenter draws it, the meter takes figures."""
        event = message.event
        if isinstance(event, ContextFigures):
            self.show_figures(event)
            return
        if stales_an_offer(event):
            self.offers.drop_suggestion()
        if isinstance(event, EffortChanged):
            return  # the snapshot that follows redraws the sidebar
        label = await self.turns.apply(event)
        if label:
            self.status_line.set_label(label)
        if isinstance(event, Outcome):
            self.update_hint()  # the turn may have found that the model has no tools
            if event.failed and event.cause == "budget" and event.result:
                self.efforts.offer_passage(event.reason, event.result)

    # ------------------------------------------------------------------ offers
    def _offers_changed(self) -> None:
        self.refresh_bindings()
        self.update_hint()

    def on_suggestion_message(self, message: msg.SuggestionMessage) -> None:
        if not message.taken:  # (auto_efforts: carried out already, its banners say so)
            self.offers.propose(message.proposal)

    def action_accept_suggestion(self) -> None:
        taken = self.offers.take()
        if isinstance(taken, str):
            self.send_message(taken, retry=True)
        elif taken is not None and self.efforts.ready("take the proposal"):
            self.link.controller.accept(taken)

    # ------------------------------------------------ keys and palette commands
    def action_cancel_turn(self) -> None:
        self.link.cancel()

    def action_inspector(self) -> None:
        if not self.is_open:
            self.notify(self.run_state.error or "The session is still opening…", severity="warning")
            return
        self.run_worker(self._inspect(self.prompt.text.strip()), group="inspector", exclusive=True, exit_on_error=False)

    async def _inspect(self, draft: str) -> None:
        from .inspector import InspectorScreen

        inspection = await self.link.controller.inspect(draft)
        self.app.push_screen(InspectorScreen(inspection, draft=bool(draft)))

    def show_lines(self, log: str, lines: tuple[int, int] | None, radius: int = 8) -> None:
        """The lines around a search hit (``log``: an effort id or "ambient"), read-only."""
        if lines is None:
            return
        self.run_worker(self._show_lines(log, lines, radius), group="lines", exclusive=True, exit_on_error=False)

    async def _show_lines(self, log: str, lines: tuple[int, int], radius: int) -> None:
        from .lines_viewer import LinesScreen

        first, last = max(1, lines[0] - radius), lines[1] + radius
        read = await self.link.controller.read_lines(log, first, last)
        title = "Ambient chat" if log == "ambient" else f"Effort log — {log}"
        self.app.push_screen(LinesScreen(title, read, hit=lines))

    def action_open_effort(self) -> None:
        self.efforts.ask_open()

    def action_scroll_chat(self, where: str) -> None:
        log = self.chat_log
        if where == "home" and (log.held or log.more_before) and self.is_open:
            self.run_worker(self._to_first(), group="older", exclusive=True, exit_on_error=False)
            return
        if where in ("page_up", "home") and log.scroll_y <= 0:
            log.want_older()  # at the top: the page said before comes back
        if (where == "end" and log.newer_hidden) or (where == "page_down" and log.scroll_y >= log.max_scroll_y):
            log.want_newest()  # at the bottom while newer lines were let go: they come back
        {"page_up": log.scroll_page_up, "page_down": log.scroll_page_down, "home": log.scroll_home}.get(
            where, log.scroll_end
        )(animate=False)

    async def _earlier(self, found: Callable[[list[LoggedLine]], int | None]) -> tuple[list[LoggedLine], int, bool]:
        """Pages said before what the pane shows, read backwards from the session until ``found`` finds
        the line looked for in them (its index) or the session's start: (the lines, that index or
        None → 0, whether more is left before them)."""
        log = self.chat_log
        lines = list(log.held)
        before = log.oldest if log.more_before else None
        more = False
        while True:
            at = found(lines)
            if at is not None or before is None:
                return lines, at or 0, more
            page = await self.link.controller.older_lines(before)
            lines = list(page.lines) + lines
            more = page.more and bool(page.lines)
            before = page.lines[0] if more else None

    async def _to_first(self) -> None:
        """Ctrl+Home: the session's first message, in one press (the pages before are read, not drawn)."""
        log = self.chat_log
        try:
            lines, _, more = await self._earlier(lambda _lines: None)
        except Exception as exc:  # noqa: BLE001 - an unreadable log must not end the app
            self.notify(f"Could not read earlier chat: {exc}", severity="warning")
            return
        if lines:
            await log.show_from(lines[:START_LINES], 0, more_before=more)
        else:
            log.scroll_home(animate=False)

    def jump_to_effort_start(self, effort_id: str) -> None:
        """The chat scrolled back to where an effort started (its "Opened effort" line, else its first
        message in the chat)."""
        if not self.is_open:
            self.notify(self.run_state.error or "The session is still opening…", severity="warning")
            return
        self.run_worker(self._to_effort_start(effort_id), group="older", exclusive=True, exit_on_error=False)

    async def _to_effort_start(self, effort_id: str) -> None:
        log = self.chat_log
        opened = f"Opened effort: {effort_id}"
        drawn = next((w for w in log.children if (line := line_of(w)) and line.banner and line.content == opened), None)
        if drawn is not None:  # drawn already: scrolled to
            log.release_anchor()
            log.scroll_to_widget(drawn, animate=False, top=True)
            return
        shown = [line for w in log.children if (line := line_of(w)) is not None]

        def found(lines: list[LoggedLine]) -> int | None:
            return next((i for i, line in enumerate(lines) if line.banner and line.content == opened), None)

        try:
            lines, at, more = await self._earlier(found)
        except Exception as exc:  # noqa: BLE001 - an unreadable log must not end the app
            self.notify(f"Could not read earlier chat: {exc}", severity="warning")
            return
        if found(lines) is None:  # no opening line (opened before the chat kept them): its first message
            lines = lines + shown
            mine = [i for i, line in enumerate(lines) if line.logged_to == effort_id and not line.banner]
            if not mine:
                self.notify(
                    f"{effort_id} has no messages in this chat (imported?): l on it reads its raw log",
                    severity="information",
                )
                return
            at = mine[0]
        await log.show_from(lines[: at + START_LINES], max(0, at - 1), more_before=more)

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

    def action_find_in_chat(self) -> None:
        self.finder.ask()

    def action_find_next(self) -> None:
        self.finder.next()

    def action_toggle_usage(self) -> None:
        """Show or hide what each reply's turn cost (tokens sent and received, dollars when known)."""
        shown = not self.chat_log.has_class("-show-usage")
        self.chat_log.set_class(shown, "-show-usage")
        self.notify("Tokens per message: shown" if shown else "Tokens per message: hidden", timeout=3)

    def action_regenerate(self) -> None:
        """Ask the model again for the last message: the last reply is withdrawn and written anew."""
        if self.efforts.ready("regenerate the reply"):
            self.link.withdraw("regenerate")

    def action_edit_last(self) -> None:
        """The last message back in the input, its exchange withdrawn: change it and send it again."""
        if self.prompt.text.strip():
            self.notify("Empty the input first (Ctrl+L): the last message comes back into it", severity="warning")
            return
        if self.efforts.ready("edit the last message"):
            self.link.withdraw("edit")
            self.prompt.focus()

    def action_demo_autoplay(self) -> None:
        on = self.driver.toggle()
        self.notify("Autoplay on: the demo types and sends by itself" if on else "Autoplay off")

    # ---------------------------------------------------------------- sessions (the picker's host)
    def action_sessions(self) -> None:
        from .sessions import SessionsScreen

        if self.demo:
            self.notify("The demo runs in a session of its own: start ccm-tui without 'demo' to switch sessions.")
            return
        if not isinstance(self.app.screen, SessionsScreen):
            self.app.push_screen(SessionsScreen(sessions_dir(), self))

    def switch_refused(self, what: str) -> str | None:
        """Why the session cannot be left now (a reply is written, or a message waits to be sent), or None."""
        state = self.link.state
        if state.busy:
            return self.link.not_ready(what)
        if state.queued:
            return f"Your message is waiting to be sent: wait for it, or withdraw it (Esc), before you {what}."
        return None

    def switch_session(self, session_dir: Path) -> None:
        """Close this session and open ``session_dir``: its history in the chat, its draft and its prompts
        in the input (what was typed here stays as this session's draft)."""
        self.prompt.leave_session()
        self.offers.withdraw()
        self.finder.forget()
        self.restart(self.settings, session_dir, demo=False)
        self.update_hint()

    async def rename_session(self, session_dir: Path, new_name: str) -> Path:
        """Rename a session of the picker (raises SessionCatalogError). The one shown here is closed,
        renamed and opened again under its new name."""
        from ...core.api import SessionCatalogError, check_rename, same_session
        from ...core.api import rename_session as rename_on_disk

        root, old = session_dir.parent, session_dir.name
        if not same_session(session_dir, self.session_dir):
            return rename_on_disk(root, old, new_name)
        reason = self.switch_refused("rename this session")
        if reason:
            raise SessionCatalogError(reason)
        if check_rename(root, old, new_name, shown_here=True) == session_dir:
            return session_dir
        self.prompt.leave_session()
        await self.link.close()
        try:
            target = rename_on_disk(root, old, new_name)
        except SessionCatalogError:
            self.prompt.use_session(session_dir)
            self.link.open()  # not renamed after all: the same session again
            raise
        self.restart(self.settings, target, demo=False)
        return target

    # -------------------------------------------------------------------- demo
    async def _demo_prefill(self) -> None:
        if self.demo and not self.busy:
            await self.driver.prefill(self.chat_log)
