"""A line of text that changes often (a spinner, a hint under the input) without laying the screen out.

``Static.update`` asks for a new layout of the whole screen every time, which costs as much as the chat
holds widgets: ten spinner frames a second, or one per key typed, over a long chat. A :class:`StatusLine` has a
fixed height (one row, set here) and its width from its container, so a new text only repaints it.
"""

from __future__ import annotations

from textual.content import Content
from textual.widget import Widget


class StatusLine(Widget):
    """One row of plain text (never parsed as markup); :meth:`set_text` changes it with a repaint only."""

    DEFAULT_CSS = """
    StatusLine {
        height: 1;
        width: 1fr;
    }
    """

    def __init__(self, text: str = "", *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._content = Content(text)

    @property
    def text(self) -> str:
        return self._content.plain

    def render(self) -> Content:
        return self._content

    def set_text(self, text: str | Content) -> None:
        """Show ``text`` instead (nothing happens when it is the same)."""
        content = text if isinstance(text, Content) else Content(text)
        if content.plain == self._content.plain and content.spans == self._content.spans:
            return
        self._content = content
        self.refresh()
