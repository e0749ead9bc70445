"""Large pastes, folded: ``[Pasted 902 lines #1]`` in the input and a collapsed block in the chat.

A paste of many lines would push everything else out of the input and the chat. The input
shows a marker in its place and keeps the text beside it; Enter sends the message with every
marker still present replaced by its text (a marker deleted by hand takes its paste with it).
The chat shows the sent message with each paste as a block that expands on a click or Enter.
What reaches the model and the logs is always the whole text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

FOLD_LINES = 12  # a paste of at least this many lines is folded …
FOLD_CHARS = 2_000  # … or of at least this many characters
SHOWN_CHARS = 200_000  # the most of one message the chat draws (the logs and the model have it all)
MARKER = re.compile(r"\[Pasted (?:[\d,]+ lines?|[\d,]+ characters) #(\d+)\]")


def line_count(text: str) -> int:
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def folds(text: str) -> bool:
    """Whether a paste of ``text`` is folded."""
    return line_count(text) >= FOLD_LINES or len(text) >= FOLD_CHARS


def describe(text: str) -> str:
    lines = line_count(text)
    return f"{lines:,} lines" if lines > 1 else f"{len(text):,} characters"


@dataclass
class Pastes:
    """The folded pastes of the message being written (marker number → text)."""

    texts: dict[int, str]

    def __init__(self) -> None:
        self.texts = {}

    def add(self, text: str) -> str:
        """Keep ``text``; its marker goes into the input."""
        number = max(self.texts, default=0) + 1
        self.texts[number] = text
        return f"[Pasted {describe(text)} #{number}]"

    def expand(self, typed: str) -> str:
        """The message as sent: each marker still in ``typed`` replaced by its paste."""
        if not self.texts:
            return typed
        return MARKER.sub(lambda m: self.texts.get(int(m.group(1)), m.group(0)), typed)

    def kept(self, typed: str) -> dict[int, str]:
        """The pastes whose markers are still in ``typed``."""
        present = {int(m.group(1)) for m in MARKER.finditer(typed)}
        return {n: t for n, t in self.texts.items() if n in present}

    def clear(self) -> None:
        self.texts = {}

    def restore(self, pastes: dict[int, str]) -> None:
        self.texts = dict(pastes)

    def fold(self, text: str) -> str:
        """A whole text put back into the input (a walked entry, a draft): folded if it is long."""
        self.texts = {}
        return self.add(text) if folds(text) else text


def segments(typed: str, pastes: dict[int, str]) -> list[tuple[str, str | None]]:
    """A sent message as the chat shows it: ``(text, None)`` for what was typed and
    ``(paste, title)`` for each folded paste, in order."""
    out: list[tuple[str, str | None]] = []
    at = 0
    for match in MARKER.finditer(typed):
        text = pastes.get(int(match.group(1)))
        if text is None:
            continue
        if typed[at : match.start()]:
            out.append((typed[at : match.start()], None))
        out.append((text, f"Pasted {describe(text)}"))
        at = match.end()
    if typed[at:]:
        out.append((typed[at:], None))
    return out


def long_message(text: str) -> list[tuple[str, str | None]] | None:
    """A long message shown again later (a relaunch): its first lines, the rest folded."""
    if not folds(text):
        return None
    lines = text.split("\n")
    head = "\n".join(lines[:3])
    rest = "\n".join(lines[3:]) if len(lines) > 3 else ""
    if not rest:
        return [(text[:SHOWN_CHARS], f"{describe(text)}")]
    title = f"{line_count(rest):,} more lines"
    if len(rest) > SHOWN_CHARS:
        rest = rest[:SHOWN_CHARS] + f"\n… {len(rest) - SHOWN_CHARS:,} more characters are in the log"
    return [(head, None), (rest, title)]
