"""Keys typed while the app starts wait for the chat input, then reach it once, in order, as typed.

``ccm-tui`` reads what was typed before it held the terminal (``commands/tui.py``). What is typed
after that sits in the terminal's queue until Textual's driver starts; the driver reads it at once
and posts the keys to the app before the chat screen is mounted and its input focused. Textual gives
a key to the focused widget or, with none, to the screen, which drops it: the type-ahead campaign
saw whole messages swallowed and first letters lost; a Ctrl+Q in that moment raced the chat's mount
and ended in a traceback. So the app holds keys and pastes here from its start until the chat says
its input is ready (:class:`~ccm_tui.ui.messages.ChatInputReady`), then replays them in order.
"""

from __future__ import annotations

from enum import Enum

from textual import events


class StartPhase(Enum):
    HOLDING = "holding"  # the chat input is not ready: keys and pastes wait here
    RUNNING = "running"  # keys go where Textual sends them


class StartupKeys:
    """The keys and pastes that came before the chat input was ready, in the order they came."""

    def __init__(self) -> None:
        self.phase = StartPhase.HOLDING
        self.held: list[events.Key | events.Paste] = []

    @property
    def starting(self) -> bool:
        """The chat input is not ready yet (the chat screen may still be being built)."""
        return self.phase is StartPhase.HOLDING

    def hold(self, event: events.Event) -> bool:
        """Keep ``event`` for later when it is a key or a paste from the terminal that came too soon
        (True); anything else goes on at once (a key the app forwards again is one already taken)."""
        if self.phase is StartPhase.RUNNING or not isinstance(event, (events.Key, events.Paste)):
            return False
        if event.is_forwarded:
            return False
        self.held.append(event)
        return True

    def release(self) -> list[events.Key | events.Paste]:
        """What was held, oldest first; from now on nothing is held."""
        self.phase = StartPhase.RUNNING
        held, self.held = self.held, []
        return held


def as_text(event: events.Key | events.Paste) -> str | None:
    """What a held key or paste writes in an input it cannot reach as a key (another screen is above
    it): its character, a new line for Enter, a paste's text; None for the other keys."""
    if isinstance(event, events.Paste):
        return event.text
    if event.key == "enter":
        return "\n"
    return event.character if event.is_printable else None
