"""The multi-line prompt: Enter sends; Alt+Enter, Ctrl+J and Shift+Enter (where the terminal reports it) insert a newline."""

from __future__ import annotations

from collections.abc import Callable
from os.path import commonprefix
from pathlib import Path

from textual import events
from textual.binding import Binding
from textual.timer import Timer
from textual.widgets import TextArea
from textual.widgets.text_area import EditResult, Selection

from ...core.api import PromptHistory
from ..messages import PromptSubmitted
from ..pastes import Pastes, describe, folds

Completer = Callable[[str], list[str]]

NEWLINE_KEYS = frozenset({"shift+enter", "ctrl+j", "alt+enter", "ctrl+enter"})
DRAFT_DELAY = 0.5  # seconds of quiet typing before the draft is written
MAX_MESSAGE_CHARS = 100_000  # ~25,000 tokens: past any working-context budget, refused before it is drawn


class PromptInput(TextArea):
    """A TextArea for chat input. Enter posts :class:`PromptSubmitted` with the text. With a
    session (:meth:`use_session`), Up/Down in an empty input walk the messages sent before, and
    the draft is kept across quitting and relaunching."""

    BINDINGS = [
        Binding("enter", "submit", "Send", id="prompt.submit", show=False),
        Binding("ctrl+j", "newline", "Newline", id="prompt.newline", key_display="^j", show=False),
    ]

    def __init__(self, *, placeholder: str = "", id: str | None = None, completer: Completer | None = None) -> None:
        super().__init__(
            id=id,
            soft_wrap=True,
            show_line_numbers=False,
            tab_behavior="focus",
            compact=True,
            placeholder=placeholder,
            highlight_cursor_line=False,
        )
        self.completer = completer  # Tab completes slash commands and effort ids with it
        self.prompts: PromptHistory | None = None
        self._walked: str | None = None  # the history entry shown, while walking it
        self._draft_timer: Timer | None = None
        self.pastes = Pastes()  # large pastes, shown folded as [Pasted N lines #k]

    def use_session(self, session_dir: Path, *, restore_draft: bool = True) -> None:
        """Walk and keep this session's prompts; its draft comes back into an empty input."""
        self.save_draft()
        self.prompts = PromptHistory(session_dir)
        self._walked = None
        draft = self.prompts.draft() if restore_draft else ""
        if draft and not self.text.strip():
            self.set_text(self.pastes.fold(draft))

    def leave_session(self) -> None:
        """Before switching sessions: what is typed stays as this session's draft, and the input empties
        (:meth:`use_session` then brings the next session's own draft back)."""
        self.save_draft()
        self.prompts = None
        self._walked = None
        self.clear()

    def remind(self, text: str) -> None:
        """Up in the empty input shows ``text`` first (the unanswered message of a crashed run)."""
        if self.prompts is not None:
            self.prompts.remind(text)
            self._walked = None

    def walk(self, step: int) -> bool:
        """Up (-1) / Down (1) through the sent messages: only from an empty input, or one that
        still shows the entry walked to (an edited entry keeps the arrows for the cursor)."""
        history = self.prompts
        if history is None or not (self.text == "" or (self._walked is not None and self.text == self._walked)):
            return False
        if self._walked is None:
            history.stop()
        entry = history.older() if step < 0 else history.newer()
        if entry is None:
            return False
        shown = self.pastes.fold(entry) if entry else ""
        self._walked = shown or None
        self.set_text(shown)
        return True

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        if self.prompts is not None:
            if self._draft_timer is not None:
                self._draft_timer.stop()
            self._draft_timer = self.set_timer(DRAFT_DELAY, self.save_draft)

    def save_draft(self) -> None:
        if self._draft_timer is not None:
            self._draft_timer.stop()
            self._draft_timer = None
        if self.prompts is not None:
            self.prompts.save_draft(
                "" if self.text == self._walked else self.pastes.expand(self.text)
            )  # an entry walked to is kept already

    def on_unmount(self) -> None:
        self.save_draft()

    async def _on_key(self, event: events.Key) -> None:
        if event.key in ("up", "down") and self.walk(-1 if event.key == "up" else 1):
            event.stop()
            event.prevent_default()
            return
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            self.action_submit()
            return
        if event.key in NEWLINE_KEYS:
            event.stop()
            event.prevent_default()
            self.action_newline()
            return
        if event.key == "tab" and self.complete():
            event.stop()
            event.prevent_default()
            return
        await super()._on_key(event)

    def complete(self) -> bool:
        """Tab on a slash command: finish it (or as far as the choices agree); False when there
        is nothing to complete (Tab then moves the focus as usual)."""
        if self.completer is None or not self.text.startswith("/") or self.cursor_location != self.document.end:
            return False
        choices = self.completer(self.text)
        if not choices:
            return False
        common = commonprefix(choices)
        if len(common) > len(self.text):
            self.set_text(common)
        elif len(choices) > 1:
            self.notify("  ".join(c.rsplit(" ", 1)[-1] or c for c in choices[:12]), title="Completions")
        return True

    async def _on_paste(self, event: events.Paste) -> None:
        """A paste goes through :meth:`paste` (preventing the default skips TextArea's handler, which
        inserts: Textual calls the handler of each class in turn)."""
        event.stop()
        event.prevent_default()
        self.paste(event.text)

    def paste(self, text: str) -> None:
        """Pasted ``text`` where the cursor is: refused whole if it would make the message too long,
        before it is drawn; a large one folded into a marker (its text kept beside it)."""
        if len(self.pastes.expand(self.text)) + len(text) > MAX_MESSAGE_CHARS:
            self.notify(
                f"That paste is {len(text):,} characters; one message takes at most {MAX_MESSAGE_CHARS:,}. "
                "Paste the part that matters, or save it to a file and ask about it in pieces.",
                title="Paste refused",
                severity="warning",
                timeout=10,
            )
            return
        text = text.replace("\r\n", "\n").replace("\r", "\n")  # terminals paste lines ended by CR
        if folds(text):  # a large paste is a marker in the input; the text is kept beside it
            start, end = self.selection
            self._replace_via_keyboard(self.pastes.add(text), start, end)
            self.notify(f"Pasted {describe(text)}: shown folded; it is sent whole", timeout=4)
            return
        self.type_in(text)

    def type_in(self, text: str) -> None:
        """``text`` as typed where the cursor is (over the selection), the cursor after it."""
        if self.read_only:
            return
        if result := self._replace_via_keyboard(text, *self.selection):
            self.move_cursor(result.end_location)

    def action_submit(self) -> None:
        """Enter: the message leaves the input at once, whole, as typed. Keys that come before the screen
        has taken it (a busy moment, a burst of typing) start the next message; they are never added to
        this one, and this one is never sent twice. A message the screen cannot send comes back
        (:meth:`give_back`)."""
        typed = self.text
        text = self.pastes.expand(typed)
        if not text.strip():
            return
        if self.prompts is not None:
            self.prompts.add(text)
        pastes = self.pastes.kept(typed)
        self.clear()
        self._walked = None
        self.post_message(PromptSubmitted(text, typed, pastes))

    def give_back(self, typed: str, pastes: dict[int, str] | None = None, *, selected: bool = False) -> bool:
        """A message that was not sent, back into the input as it was typed — if nothing else was typed
        since (what is there is never overwritten). False when it could not come back. ``selected``:
        the text comes back selected, so that the next message typed replaces it instead of being
        glued to it (an arrow, Home or End keeps it, to edit it)."""
        if self.text.strip():
            return False
        self.set_text(typed, pastes or {})
        if selected:
            self.selection = Selection((0, 0), self.document.end)
        return True

    def action_newline(self) -> None:
        start, end = self.selection
        self._replace_via_keyboard("\n", start, end)

    def set_text(self, text: str, pastes: dict[int, str] | None = None) -> None:
        """Replace the content and put the cursor at its end (``pastes``: the folded ones it shows)."""
        if pastes is not None:
            self.pastes.restore(pastes)
        self.text = text
        self.move_cursor(self.document.end)

    def clear(self) -> EditResult:
        self.pastes.clear()
        return super().clear()
