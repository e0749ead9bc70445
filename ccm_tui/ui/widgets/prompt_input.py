"""The multi-line prompt: Enter sends; Alt+Enter, Ctrl+J and Shift+Enter (where the terminal reports it) insert a newline."""

from __future__ import annotations

from collections.abc import Callable
from os.path import commonprefix

from textual import events
from textual.binding import Binding
from textual.widgets import TextArea

from ..messages import PromptSubmitted

Completer = Callable[[str], list[str]]

NEWLINE_KEYS = frozenset({"shift+enter", "ctrl+j", "alt+enter", "ctrl+enter"})
MAX_MESSAGE_CHARS = 100_000  # ~25,000 tokens: past any working-context budget, refused before it is drawn


class PromptInput(TextArea):
    """A TextArea for chat input. Enter posts :class:`PromptSubmitted` with the text."""

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

    async def _on_key(self, event: events.Key) -> None:
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
        """A paste that would make the message too long is refused whole, before it is drawn (Textual calls
        the handler of each class in turn; preventing the default skips TextArea's, which inserts)."""
        if len(self.text) + len(event.text) > MAX_MESSAGE_CHARS:
            event.stop()
            event.prevent_default()
            self.notify(
                f"That paste is {len(event.text):,} characters; one message takes at most {MAX_MESSAGE_CHARS:,}. "
                "Paste the part that matters, or save it to a file and ask about it in pieces.",
                title="Paste refused",
                severity="warning",
                timeout=10,
            )
            # (a paste that fits is left to TextArea's own handler)

    def action_submit(self) -> None:
        text = self.text
        if text.strip():
            self.post_message(PromptSubmitted(text))

    def action_newline(self) -> None:
        start, end = self.selection
        self._replace_via_keyboard("\n", start, end)

    def set_text(self, text: str) -> None:
        """Replace the content and put the cursor at its end."""
        self.text = text
        self.move_cursor(self.document.end)
