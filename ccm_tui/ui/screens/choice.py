"""A small modal menu: a title, an optional text, and choices (effort actions, confirmations)."""

from __future__ import annotations

from dataclasses import dataclass

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option


@dataclass(frozen=True)
class Choice:
    id: str
    label: str
    help: str = ""
    key: str = ""


class ChoiceDialog(ModalScreen[str | None]):
    """Dismisses with the chosen id, or None on Escape."""

    BINDINGS = [Binding("escape", "dismiss_none", "Close", id="dialog.close")]

    def __init__(self, title: str, choices: list[Choice], *, text: str | Content = "") -> None:
        super().__init__(classes="dialog-screen")
        self.title_text = title
        self.text = text
        self.choices = choices
        self.chosen = False  # dismissed once: a key pressed twice fast must not pop a second screen

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(self.title_text, classes="dialog-title", markup=False)
            if self.text:
                yield Static(self.text, classes="dialog-text", markup=False)
            options = []
            for c in self.choices:
                prompt = Content.assemble((f"{c.key:<2}" if c.key else "", "$accent bold"), (c.label, "bold"))
                if c.help:
                    prompt = Content.assemble(prompt, "\n", ("   " if c.key else "", ""), (c.help, "$foreground-muted"))
                options.append(Option(prompt, id=c.id))
            yield OptionList(*options, classes="dialog-choices")
            yield Static("↑↓ choose · Enter confirm · Esc close", classes="dialog-hint")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self._choose(event.option.id)

    def on_key(self, event) -> None:
        for c in self.choices:
            if c.key and event.key == c.key:
                event.stop()
                self._choose(c.id)
                return

    def action_dismiss_none(self) -> None:
        self._choose(None)

    def _choose(self, choice: str | None) -> None:
        """Dismiss once: keys typed ahead after the first choice (``e`` ``e``) reach no second pop,
        which would end the app with a ScreenStackError."""
        if self.chosen:
            return
        self.chosen = True
        self.dismiss(choice)
