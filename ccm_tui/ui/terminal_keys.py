"""Alt+Enter as terminals really send it.

tmux and most terminals send Alt+Enter as ESC followed by CR. Textual's input
parser (8.x) reads ESC + CR as a plain ``enter``, so Alt+Enter would send the
message instead of starting a new line. :func:`install` teaches the parser to
report ``alt+enter`` for that sequence. It wraps one private method of
Textual's parser; ``tests/ui/widgets/test_prompt_input_keys.py`` feeds it the raw bytes, so a
Textual upgrade that changes the method fails that test instead of silently
sending half-typed messages.
"""

from __future__ import annotations

from collections.abc import Iterable

from textual import events

_MARK = "_ccm_alt_enter"


def install() -> None:
    from textual._xterm_parser import XTermParser

    original = XTermParser._sequence_to_key_events
    if getattr(original, _MARK, False):
        return

    def sequence_to_key_events(self: XTermParser, sequence: str, alt: bool = False) -> Iterable[events.Key]:
        if alt and sequence == "\r":
            yield events.Key("alt+enter", None)
            return
        yield from original(self, sequence, alt)

    setattr(sequence_to_key_events, _MARK, True)
    XTermParser._sequence_to_key_events = sequence_to_key_events  # type: ignore[method-assign]
