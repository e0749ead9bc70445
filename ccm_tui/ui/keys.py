"""The chat screen's keys, with a short footer label and a longer description for the F1 help."""

from __future__ import annotations

from textual.binding import Binding

CHAT_BINDINGS: list[Binding | tuple[str, str] | tuple[str, str, str]] = [
    Binding(
        "escape",
        "cancel_turn",
        "Cancel reply",
        tooltip="Cancel the reply being written (what came so far is kept)",
        id="cancel_turn",
    ),
    Binding("f2", "inspector", "Context", tooltip="Context inspector: exactly what the model will see", id="inspector"),
    Binding(
        "f4",
        "app.settings",
        "Settings",
        tooltip="Settings: model, API base, budget, thresholds, theme",
        id="settings",
    ),
    Binding(
        "ctrl+o",
        "open_effort",
        "Open effort",
        tooltip="Open a new effort (it becomes the active one)",
        id="open_effort",
        priority=True,
    ),
    Binding(
        "ctrl+f",
        "app.search_efforts",
        "Search",
        tooltip="Search all efforts, concluded ones included",
        id="search_efforts",
        priority=True,
    ),
    Binding(
        "f3",
        "find_next",
        "Find",
        tooltip="Find in the chat shown (again: the next older match)",
        id="find_in_chat",
        priority=True,
        show=False,
    ),
    Binding(
        "ctrl+s",
        "sessions",
        "Sessions",
        tooltip="Sessions: switch to another, start a new one, rename one",
        id="sessions",
        priority=True,
        show=False,
    ),
    Binding(
        "ctrl+g",
        "focus_efforts",
        "Efforts",
        tooltip="Move to the effort list (Esc comes back)",
        id="focus_efforts",
        priority=True,
    ),
    Binding(
        "ctrl+b",
        "toggle_sidebar",
        "Sidebar",
        tooltip="Show or hide the sidebar",
        id="toggle_sidebar",
        priority=True,
        show=False,
    ),
    Binding(
        "pageup",
        "scroll_chat('page_up')",
        "Scroll up",
        tooltip="Scroll the chat up a page",
        id="scroll_up",
        priority=True,
        show=False,
    ),
    Binding(
        "pagedown",
        "scroll_chat('page_down')",
        "Scroll down",
        tooltip="Scroll the chat down a page",
        id="scroll_down",
        priority=True,
        show=False,
    ),
    Binding(
        "ctrl+home",
        "scroll_chat('home')",
        "Oldest",
        tooltip="Go to the session's first message, in one press",
        id="scroll_home",
        priority=True,
        show=False,
    ),
    Binding(
        "ctrl+end",
        "scroll_chat('end')",
        "Newest",
        tooltip="Scroll to the newest message",
        id="scroll_end",
        priority=True,
        show=False,
    ),
    Binding(
        "ctrl+l",
        "clear_prompt",
        "Clear input",
        tooltip="Clear input: empty the message being written",
        id="clear_prompt",
        show=False,
    ),
    Binding(
        "alt+c",
        "copy_reply",
        "Copy reply",
        tooltip="Copy reply: the last answer, as Markdown",
        id="copy_reply",
        priority=True,  # a terminal sends ESC c as alt+c *with* the character: the input would type it
        show=False,
    ),
    Binding(
        "alt+k",
        "copy_code",
        "Copy code",
        tooltip="Copy code: the last code block of the chat",
        id="copy_code",
        priority=True,  # a terminal sends ESC c as alt+c *with* the character: the input would type it
        show=False,
    ),
    Binding(
        "ctrl+t",
        "toggle_usage",
        "Tokens",
        tooltip="Tokens per message: show or hide what each reply's turn cost (sent, received, dollars)",
        id="toggle_usage",
        priority=True,
        show=False,
    ),
    Binding(
        "ctrl+r",
        "regenerate",
        "Regenerate",
        tooltip="Regenerate: withdraw the last reply and ask the model again for the same message",
        id="regenerate",
        priority=True,
        show=False,
    ),
    Binding(
        "f5",
        "edit_last",
        "Edit last",
        tooltip="Edit the last message: it comes back into the input and its exchange is withdrawn",
        id="edit_last",
        priority=True,
        show=False,
    ),
    Binding(
        "ctrl+y",
        "accept_suggestion",
        "Yes",
        tooltip="Take what the app offers under the input: an effort for the topic the chat settled on, or "
        "sending again the message a crash left unanswered",
        id="accept_suggestion",
        priority=True,
    ),
    Binding(
        "f6",
        "demo_autoplay",
        "Autoplay",
        tooltip="Demo: let it type and send by itself",
        id="demo_autoplay",
        priority=True,
    ),
]


KEY_NAMES = {"pageup": "PgUp", "pagedown": "PgDn", "escape": "Esc", "ctrl": "Ctrl", "alt": "Alt", "shift": "Shift"}


def key_name(key: str) -> str:
    """One key as a person reads it: ``alt+c`` → ``Alt+C``, ``pageup`` → ``PgUp``."""
    return "+".join(KEY_NAMES.get(p, p.upper() if len(p) == 1 else p.capitalize()) for p in key.split("+"))


def binding_keys(binding: Binding) -> str:
    """All keys of a binding, as shown in the help and the palette ("Alt+Enter / Ctrl+J")."""
    return " / ".join(binding.key_display or key_name(k.strip()) for k in binding.key.split(","))


def key_for(action: str) -> str:
    """The keys of ``action`` from the bindings above, so that the command palette and the help
    never disagree with what the keys really do ("" when the action has no key)."""
    for binding in CHAT_BINDINGS:
        if isinstance(binding, Binding) and binding.action == action:
            return binding_keys(binding)
    return ""
