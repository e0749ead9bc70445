"""The user's side of the offline demo: each scripted message waits in the prompt for Enter,
or, with autoplay, is typed and sent by itself."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from textual.app import App

    from .widgets.chat_log import ChatLog
    from .widgets.prompt_input import PromptInput


class DemoHost(Protocol):
    """What the demo needs of the chat screen: its prompt, whether it can send, and sending."""

    @property
    def app(self) -> App: ...

    @property
    def prompt(self) -> PromptInput: ...

    @property
    def busy(self) -> bool: ...

    @property
    def is_open(self) -> bool: ...

    def send(self, text: str) -> None: ...

    def update_hint(self) -> None: ...


INTRO = (
    "DEMO — an offline scripted model drives the real core: no key, no network. "
    "Press Enter to send each scripted message and watch the sidebar and the meter."
)
OUTRO = (
    "End of the demo script. Look around: Tab to the efforts (Enter for actions), "
    "F2 shows what the model sees, Ctrl+P lists every command."
)
TYPE_CHARS = 2  # per tick (50 ms)
PAUSE_BEFORE_SEND = 16  # ticks
PAUSE_AFTER_REPLY = 40  # ticks


class DemoDriver:
    """Driven by the chat screen: ``start`` once the session is open, ``tick`` every 50 ms."""

    def __init__(self, screen: DemoHost, *, autoplay: bool = False) -> None:
        self.screen = screen
        self.script: list[str] = []  # loaded by start(): the demo module is not needed otherwise
        self.autoplay = autoplay
        self.next = 0
        self.finished = False
        self._typed = 0
        self._wait = 0

    async def start(self, turn: int, log: ChatLog) -> None:
        """Pick up the script where the session is; the intro banner for a new session."""
        from ..demo import script_messages

        self.script = script_messages()
        self.next = min(turn, len(self.script))
        self.finished = False
        if turn == 0:
            await log.add_banner(INTRO, "demo")

    async def prefill(self, log: ChatLog) -> None:
        """Offer the next message in the prompt; the outro banner once the script is done."""
        if not self.script:
            return
        if self.next < len(self.script):
            prompt = self.screen.prompt
            if not prompt.text.strip() and not self.autoplay:
                prompt.set_text(self.script[self.next])
            return
        if self.finished:
            return
        self.finished = True
        self.autoplay = False
        await log.add_banner(OUTRO, "demo")
        self.screen.update_hint()  # (no scripted message waits in the input any more)

    def sent(self, text: str) -> None:
        if self.next < len(self.script) and " ".join(text.split()) == " ".join(self.script[self.next].split()):
            self.next += 1

    def unsent(self, text: str) -> None:
        """The message was cancelled before its turn began: offer it again."""
        if self.next > 0 and " ".join(text.split()) == " ".join(self.script[self.next - 1].split()):
            self.next -= 1

    def toggle(self) -> bool:
        self.autoplay = not self.autoplay
        self._typed = self._wait = 0
        return self.autoplay

    def tick(self) -> None:
        """Autoplay: pause, type the next message, pause, send it."""
        screen = self.screen
        if not self.autoplay or screen.busy or not screen.is_open or self.next >= len(self.script):
            return
        if screen.app.screen is not screen:
            return
        if self._wait > 0:
            self._wait -= 1
            return
        target = self.script[self.next]
        if self._typed < len(target):
            self._typed = min(len(target), self._typed + TYPE_CHARS)
            screen.prompt.set_text(target[: self._typed])
            if self._typed == len(target):
                self._wait = PAUSE_BEFORE_SEND
            return
        self._typed = 0
        self._wait = PAUSE_AFTER_REPLY
        text = screen.prompt.text
        screen.prompt.clear()  # it leaves the input, as Enter takes it
        screen.send(text)
