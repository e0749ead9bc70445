"""What the chat screen's keys and palette commands do: screens, scrolling, focus, copying, cancel.

A base class of :class:`~.chat.ChatScreen`, kept apart so the screen module holds
the layout and the drawing of the session; every action here is also in the
command palette (``ui/commands.py``) and its key in ``ui/keys.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from textual.screen import Screen

from ...config import Settings, sessions_dir
from ..widgets.chat_log import ChatLog
from ..widgets.chat_message import ChatMessage
from ..widgets.prompt_input import PromptInput
from ..widgets.sidebar import Sidebar
from .question import PromptDialog

if TYPE_CHECKING:
    from ...core.api import Proposal, RunState
    from ..controller_link import SessionLink
    from ..demo_driver import DemoDriver
    from ..effort_menu import EffortActions


class ChatActions(Screen[None]):
    link: SessionLink
    efforts: EffortActions
    driver: DemoDriver
    run_state: RunState
    show_sidebar: bool | None
    demo: bool
    suggestion: Proposal | None
    unanswered: str | None
    finding: str = ""  # what "Find in the chat" looks for (F3 again: the next older match)
    found: ChatMessage | None = None

    @property
    def is_open(self) -> bool:
        return self.run_state.is_open

    @property
    def prompt(self) -> PromptInput:
        return self.query_one(PromptInput)

    @property
    def chat_log(self) -> ChatLog:
        return self.query_one(ChatLog)

    @property
    def sidebar_visible(self) -> bool:
        raise NotImplementedError

    @property
    def settings(self) -> Settings:
        raise NotImplementedError

    def restart(self, settings: Settings, session_dir: Path, *, demo: bool) -> None:
        raise NotImplementedError

    def update_hint(self) -> None:
        raise NotImplementedError

    def action_cancel_turn(self) -> None:
        self.link.cancel()

    # ----------------------------------------------------------------- screens
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
        if where in ("page_up", "home") and log.scroll_y <= 0:
            log.want_older()  # at the top: the page said before comes back
        if where in ("page_down", "end") and log.scroll_y >= log.max_scroll_y:
            log.want_newest()  # at the bottom while newer lines were let go: they come back
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

    def action_find_in_chat(self) -> None:
        def chosen(text: str | None) -> None:
            if text and text.strip():
                self.finding, self.found = text.strip(), None
                self.action_find_next()

        self.app.push_screen(
            PromptDialog(
                "Find in the chat",
                value=self.finding,
                help="In the messages shown here (Ctrl+F searches every effort). F3 finds the next, older, one.",
            ),
            chosen,
        )

    def action_find_next(self) -> None:
        """The next older message that holds the text (from the newest again after the oldest)."""
        if not self.finding:
            self.action_find_in_chat()
            return
        wanted = self.finding.casefold()
        hits = [m for m in self.chat_log.messages() if wanted in m.text.casefold()]
        for message in self.query(".message.-found"):
            message.remove_class("-found")
        if not hits:
            self.notify(f"“{self.finding}” is not in the chat shown (Ctrl+F searches every effort)", severity="warning")
            return
        at = hits.index(self.found) - 1 if self.found in hits else len(hits) - 1
        self.found = hits[at % len(hits)]
        self.found.add_class("-found")
        self.chat_log.scroll_to_widget(self.found, animate=False, top=True)
        self.notify(f"{at % len(hits) + 1} of {len(hits)} (F3: the next older)", title=f"Found “{self.finding}”")

    def action_toggle_usage(self) -> None:
        """Show or hide what each reply's turn cost (tokens sent and received, dollars when known)."""
        shown = not self.chat_log.has_class("-show-usage")
        self.chat_log.set_class(shown, "-show-usage")
        self.notify("Tokens per message: shown" if shown else "Tokens per message: hidden", timeout=3)

    def action_regenerate(self) -> None:
        """Ask the model again for the last message: the last reply is withdrawn and written anew."""
        if self.efforts.ready("regenerate the reply"):
            self.link.take_back("regenerate")

    def action_edit_last(self) -> None:
        """The last message back in the input, its exchange withdrawn: change it and send it again."""
        if self.prompt.text.strip():
            self.notify("Empty the input first (Ctrl+L): the last message comes back into it", severity="warning")
            return
        if self.efforts.ready("edit the last message"):
            self.link.take_back("edit")
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

    @property
    def session_dir(self) -> Path:
        return self.link.session_dir

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
        self.suggestion = self.unanswered = None
        self.found = None
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
