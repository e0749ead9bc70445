"""Logged text on screen: always plain, never parsed as markup.

Text from the user, the model, a transcript or a file may hold anything — ``[pgbouncer]``,
``[/]``, ``[bold]``, ``[docs](https://…)``, backslashes. Textual parses a ``str`` handed to most
widgets (``Static``, tooltips, notifications, the command palette's help) as content markup, so
such text would be mangled or end the app. Everything the UI shows of logged text is built here
as :class:`~textual.content.Content` from plain strings, styles applied by spans: no markup string
is ever made from outside text.
"""

from __future__ import annotations

from collections.abc import Iterable

from textual.content import Content

from ..core.terminal_text import terminal_safe

MATCH_STYLE = "bold reverse"  # a matched term of a search passage


def plain(text: str, style: str = "") -> Content:
    """``text`` as given (less what a terminal would act on: :func:`terminal_safe`), in one ``style``."""
    text = terminal_safe(text)
    return Content.styled(text, style) if style else Content(text)


def highlighted(pieces: Iterable[tuple[str, bool]], style: str = MATCH_STYLE) -> Content:
    """Text in pieces, the matched ones in ``style`` (a search result's ``Marked.pieces()``)."""
    return Content.assemble(*((terminal_safe(text), style) if hit else terminal_safe(text) for text, hit in pieces))


def lines(*parts: Content) -> Content:
    """Contents one under the other."""
    return Content("\n").join(parts)
