"""The line under the prompt: what is being typed may be (a slash command), what the app proposes,
or the keys — with the sidebar's key when it is hidden and a note when the model has no tools."""

from __future__ import annotations

from ...core.api import COMMANDS
from .line import StatusLine

HINT = "Enter send · Alt+Enter or Ctrl+J newline · F1 keys · Ctrl+P all commands"
CANCEL_HINT = "Esc cancels the reply"  # said only while there is one to cancel
NO_TOOLS_HINT = "no tools: Ctrl+O opens an effort, Ctrl+G then d concludes it"
DEMO_HINT = "DEMO · Enter sends the scripted message (edit it if you like) · F6 autoplay · Ctrl+P all commands"
DEMO_DONE_HINT = "DEMO · the script is done: type anything (the scripted model answers briefly) · Ctrl+P all commands"


def command_hint(typed: str) -> str | None:
    """What a slash command being typed may be (None when it is not one)."""
    if not typed.startswith("/") or typed.startswith("//") or "\n" in typed:
        return None
    word = typed[1:].split(" ", 1)[0].casefold()
    matching = [c for c in COMMANDS if c.name.startswith(word) or any(a.startswith(word) for a in c.aliases)]
    if not matching:
        return "unknown command · /help lists them · // sends a message that starts with /"
    if len(matching) == 1:
        return f"{matching[0].usage} — {matching[0].help} · Tab completes"
    return " · ".join(c.usage for c in matching) + " · Tab completes"


class PromptHint(StatusLine):
    """Redrawn on every key typed: a :class:`StatusLine`, whose changes cost a repaint, never a layout."""

    def __init__(self, *, demo: bool, id: str | None = None) -> None:
        super().__init__(DEMO_HINT if demo else HINT, id=id)
        self.demo = demo

    def show(
        self,
        *,
        typed: str,
        proposal: str | None,
        no_tools: bool,
        sidebar_visible: bool,
        cancellable: bool = False,
        demo_done: bool = False,
    ) -> None:
        command = command_hint(typed)
        if command is None and proposal is not None:
            command = f"{proposal} · or just keep typing"
        if command is not None:
            self.set_text(command)
            return
        hint = (DEMO_DONE_HINT if demo_done else DEMO_HINT) if self.demo else HINT
        if cancellable:
            hint = f"{CANCEL_HINT} · {hint}"
        if no_tools:
            hint = f"{NO_TOOLS_HINT} · {hint}"
        self.set_text(hint if sidebar_visible else f"Ctrl+B efforts · {hint}")
