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

from ..core.api import terminal_safe

MATCH_STYLE = "bold reverse"  # a matched term of a search passage


def plain(text: str, style: str = "") -> Content:
    """``text`` as given (less what a terminal would act on: :func:`terminal_safe`), in one ``style``."""
    text = terminal_safe(text)
    return Content.styled(text, style) if style else Content(text)


def highlighted(text: str, spans: Iterable[tuple[int, int]], style: str = MATCH_STYLE) -> Content:
    """``text`` with the spans a search matched in ``style`` (a search result's ``Marked``): the text is
    cut at the spans first, then each piece made safe, so that no cleaning can shift a span."""
    pieces: list[tuple[str, str] | str] = []
    at = 0
    for start, end in spans:
        if start < at or end <= start:
            continue
        pieces += [terminal_safe(text[at:start]), (terminal_safe(text[start:end]), style)]
        at = end
    pieces.append(terminal_safe(text[at:]))
    return Content.assemble(*(p for p in pieces if p and (not isinstance(p, tuple) or p[0])))


def lines(*parts: Content) -> Content:
    """Contents one under the other."""
    return Content("\n").join(parts)
