"""Find in the chat (F3): text in the messages shown, newest first, one match at a time.

Only what the chat pane holds is looked in (Ctrl+F searches every effort through the core). The chat
screen owns one :class:`ChatFind` over its chat log; F3 again steps to the next older match, and
after the oldest back to the newest.
"""

from __future__ import annotations

from .screens.question import PromptDialog
from .widgets.chat_log import ChatLog
from .widgets.chat_message import ChatMessage


class ChatFind:
    def __init__(self, log: ChatLog) -> None:
        self.log = log
        self.finding = ""  # what is looked for (F3 again: the next older match)
        self.found: ChatMessage | None = None  # the match shown

    def ask(self) -> None:
        """Ask what to look for (the last text pre-filled), then show its newest match."""

        def chosen(text: str | None) -> None:
            if text and text.strip():
                self.finding, self.found = text.strip(), None
                self.next()

        self.log.app.push_screen(
            PromptDialog(
                "Find in the chat",
                value=self.finding,
                help="In the messages shown here (Ctrl+F searches every effort). F3 finds the next, older, one.",
            ),
            chosen,
        )

    def next(self) -> None:
        """The next older message that holds the text (from the newest again after the oldest)."""
        if not self.finding:
            self.ask()
            return
        wanted = self.finding.casefold()
        hits = [m for m in self.log.messages() if wanted in m.text.casefold()]
        for message in self.log.query(".message.-found"):
            message.remove_class("-found")
        if not hits:
            self.log.notify(
                f"“{self.finding}” is not in the chat shown (Ctrl+F searches every effort)", severity="warning"
            )
            return
        at = hits.index(self.found) - 1 if self.found in hits else len(hits) - 1
        self.found = hits[at % len(hits)]
        self.found.add_class("-found")
        self.log.scroll_to_widget(self.found, animate=False, top=True)
        self.log.notify(f"{at % len(hits) + 1} of {len(hits)} (F3: the next older)", title=f"Found “{self.finding}”")

    def forget(self) -> None:
        """Another session is shown: the match was in the chat that is gone (the text is kept for F3)."""
        self.found = None
