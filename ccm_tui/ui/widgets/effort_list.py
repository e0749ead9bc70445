"""The efforts in the sidebar: Open (active marked), Expanded (with decay counters), Concluded.

Each effort is a focusable row. Click or Enter opens its actions; the action
keys of the focused row (only those valid for its state) show in the footer.
Concluded summaries show as a tooltip on hover and in the detail panel on select.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widget import Widget
from textual.widgets import Static

from ...core.api import Action, EffortState, EffortView, listing_order, terminal_safe
from ..action_looks import LOOKS, offered, parse_action
from ..messages import EffortActionRequested, EffortActivated, EffortSelected, TypingRedirected
from ..plain_text import plain

MAX_CONCLUDED_ROWS = 30
MAX_NAME_CHARS = 48  # the whole name is in the row's tooltip and the detail panel


@dataclass(frozen=True)
class Row:
    """What one sidebar row shows (compared to skip redundant redraws)."""

    effort_id: str
    section: str  # open | expanded | concluded
    title: Content
    detail: Content
    tooltip: str | None
    classes: str


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _name(e: EffortView, style: str = "bold") -> Content:
    """The human name (shortened with an ellipsis), then the id, dimmed, when the name says something else."""
    if e.title == e.id:
        return Content.styled(e.id, style)
    title = terminal_safe(e.title)
    name = title if len(title) <= MAX_NAME_CHARS else title[: MAX_NAME_CHARS - 1].rstrip() + "…"
    return Content.assemble((name, style), (f"  {e.id}", "$foreground-muted"))


def build_rows(
    efforts: tuple[EffortView, ...],
    decay_threshold: int,
    in_context: Mapping[str, int] | None = None,
    unlisted: int = 0,
) -> tuple[list[Row], int]:
    """Rows per section and the number of concluded efforts left out (only the newest are listed;
    ``unlisted`` more were not even in ``efforts``).

    The active effort is the first open row, so it stays in view however many efforts are open.
    ``in_context`` gives the tokens each open or expanded effort takes in the working context, the
    figure the meter adds up (the whole raw log's size when not given)."""
    in_context = in_context or {}
    rows: list[Row] = []
    for e in sorted((e for e in efforts if e.state.is_open), key=lambda e: not e.active):
        if e.state.is_open:
            mark = "▶" if e.active else "•"
            title = Content.assemble((f"{mark} ", "$accent" if e.active else "$foreground-muted"), _name(e))
            if e.active:
                title = Content.assemble(title, ("  active", "$success"))
            detail = Content.styled(
                f"{in_context.get(e.id, e.raw_tokens):,} tokens in context · {_plural(e.messages, 'line')}",
                "$foreground-muted",
            )
            rows.append(Row(e.id, "open", title, detail, e.summary, "effort -open" + (" -active" if e.active else "")))
    for e in efforts:
        if e.state is EffortState.EXPANDED:
            left = e.turns_left(decay_threshold)
            title = Content.assemble(("◆ ", "$warning"), _name(e))
            detail = Content.styled(
                f"collapses in {_plural(left, 'turn')} · {in_context.get(e.id, e.raw_tokens):,} tokens loaded",
                "$warning",
            )
            rows.append(Row(e.id, "expanded", title, detail, e.summary, "effort -expanded"))
    # in working memory first, the latest conclusion first: the order of every list (core listing_order)
    concluded = [e for e in listing_order(efforts) if e.state in (EffortState.CONCLUDED, EffortState.EVICTED)]
    for e in concluded[:MAX_CONCLUDED_ROWS]:
        summary = " ".join(terminal_safe(e.summary or "no summary").split())
        if e.evicted:
            title = Content.assemble(
                ("○ ", "$foreground-muted"),
                _name(e, "$foreground-muted"),
                ("  not in memory", "$foreground-muted italic"),
            )
        else:
            title = Content.assemble(("✓ ", "$success"), _name(e))
        detail = Content.styled(summary, "$foreground-muted")
        rows.append(
            Row(e.id, "concluded", title, detail, e.summary, "effort -concluded" + (" -evicted" if e.evicted else ""))
        )
    return rows, max(0, len(concluded) - MAX_CONCLUDED_ROWS) + unlisted


class EffortItem(Static):
    """One effort row."""

    can_focus = True

    BINDINGS = [
        Binding("escape", "leave", "Back to input", id="effort.leave"),
        Binding("enter", "activate", "Actions", id="effort.actions"),
        *[
            Binding(a.key, f"effort('{a.name}')", a.short, id=f"effort.{a.name}", show=a.in_footer)
            for a in LOOKS.values()
        ],
        Binding("up", "move(-1)", "Previous", id="effort.previous", show=False),
        Binding("down", "move(1)", "Next", id="effort.next", show=False),
    ]

    def __init__(self, row: Row, effort: EffortView) -> None:
        super().__init__(Content.assemble(row.title, "\n", row.detail), classes=row.classes)
        self.row = row
        self.effort = effort
        self.tooltip = plain(row.tooltip) if row.tooltip else None  # a summary: plain text, never markup
        self._leaving = False  # the focus is on its way to the input: keys still arriving here go there

    @property
    def effort_id(self) -> str:
        return self.row.effort_id

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "effort" and parameters:
            chosen = parse_action(str(parameters[0]))
            return chosen is not None and offered(self.effort, chosen)
        return True

    async def on_key(self, event: events.Key) -> None:
        """The row's keys, handled here in the order they came.

        Keys come in bursts, each sent to the widget focused when the app read it, and a binding would
        only run once the key has bubbled up to the app, after the keys that followed it were sent
        here already. So the row runs its own bindings at once (Down moves the focus before the next
        key is looked at), and a key it gets once it has lost the focus goes where the focus is now,
        or to the input when the focus is on its way there (Esc, typing).

        A printable key that is no action key of the list is typing: it goes to the input, with the
        focus. An action key never does, even when the action is not valid for the row as last drawn
        (``e`` then ``c`` before the redraw): it is applied, or dropped with a word why."""
        focused = self.app.focused
        if self._leaving or focused is not self:
            event.stop()
            event.prevent_default()
            if self._leaving:
                self.post_message(TypingRedirected(event.character or "", "" if event.is_printable else event.key))
            elif focused is not None:
                focused.post_message(events.Key(event.key, event.character))
            return
        binding = next(iter(self._bindings.key_to_bindings.get(event.key, ())), None)
        if binding is not None:
            event.stop()
            event.prevent_default()
            look = next((a for a in LOOKS.values() if a.key == event.key), None)
            if look is not None and not offered(self.effort, look.action):
                self.notify(f"{look.short}: not for {self.effort.id} as it is now", timeout=3)
                return
            await self.run_action(binding.action)
            return
        if event.is_printable and event.character:
            event.stop()
            event.prevent_default()
            self._leaving = True
            self.post_message(TypingRedirected(event.character))

    def show_row(self, row: Row, effort: EffortView) -> None:
        """Redrawn in place: the widget (and so the focus, when it has it) stays."""
        if row != self.row:
            self.update(Content.assemble(row.title, "\n", row.detail))
            self.set_classes(row.classes)
            self.tooltip = plain(row.tooltip) if row.tooltip else None
            self.row = row
        if effort != self.effort:
            self.effort = effort
            if self.has_focus:
                self.screen.refresh_bindings()  # the footer names the keys valid for its new state

    def action_leave(self) -> None:
        self._leaving = True
        self.post_message(TypingRedirected(""))

    def on_click(self) -> None:
        self.focus()
        self.post_message(EffortActivated(self.effort_id))

    def on_focus(self) -> None:
        self._leaving = False
        self.post_message(EffortSelected(self.effort_id))

    def action_activate(self) -> None:
        self.post_message(EffortActivated(self.effort_id))

    def action_effort(self, name: str) -> None:
        chosen = parse_action(name)
        if chosen is None:
            return
        # a key press can be a slip of the fingers: concluding from a key asks first
        self.post_message(EffortActionRequested(self.effort_id, chosen, confirm=chosen is Action.CONCLUDE))

    def action_move(self, step: int) -> None:
        items = list(self.screen.query(EffortItem))
        if self in items:  # at once: the next key of a burst already goes to the row moved to
            self.screen.set_focus(items[(items.index(self) + step) % len(items)])


SECTION_TITLES = {"open": "OPEN", "expanded": "EXPANDED", "concluded": "CONCLUDED"}
EMPTY_TEXT = (
    'No efforts yet.\n\nAn effort opens when you start a focused topic ("let\'s plan …", '
    '"help me debug …"), or with Ctrl+O. Greetings and quick questions stay ambient.'
)


class SidebarEffortList(VerticalScroll):
    """The three sections of efforts; redrawn only when something visible changed."""

    can_focus = False

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._shown: tuple = ()

    def compose(self) -> ComposeResult:  # (composed, not mounted after: no second layout before the first paint)
        yield Static(EMPTY_TEXT, classes="efforts-empty")

    async def show(
        self,
        efforts: tuple[EffortView, ...],
        decay_threshold: int,
        in_context: Mapping[str, int] | None = None,
        unlisted: int = 0,
    ) -> None:
        rows, hidden = build_rows(efforts, decay_threshold, in_context, unlisted)
        shown = (tuple(rows), hidden)
        if shown == self._shown:
            return
        self._shown = shown
        focused = self.app.focused
        focused_id = focused.effort_id if isinstance(focused, EffortItem) and focused.parent is self else None
        by_id = {e.id: e for e in efforts}
        # Rows are updated and moved in place, never removed and mounted again: the focused row keeps the
        # focus through the redraw, so a key typed meanwhile still reaches the list (a remount left the
        # focus to the input for a moment, and the key was typed there).
        widgets = self._widgets(rows, hidden, by_id)
        kept = set(widgets)
        stale = [child for child in self.children if child not in kept]
        moved_to = None
        if focused_id is not None and focused_id not in by_id:  # its effort is gone: the next row takes the focus
            was = list(self.query_children(EffortItem)).index(focused)  # type: ignore[arg-type]
            items = [w for w in widgets if isinstance(w, EffortItem)]
            moved_to = items[min(was, len(items) - 1)] if items else None
        if moved_to is not None and moved_to.parent is self:
            self.screen.set_focus(moved_to)  # before the focused row goes: the focus never leaves the list
        with self.app.batch_update():
            if stale:
                await self.remove_children(stale)
            await self._arrange(widgets)
        if moved_to is not None:
            self.screen.set_focus(moved_to)
        # the focused row is kept in view; else the active effort is brought into view (a redraw
        # after scrolling down the concluded ones must not leave it out of sight)
        keep = moved_to or (self.item(focused_id) if focused_id is not None else None)
        shown_row = keep or next(iter(self.query("EffortItem.-active").results(EffortItem)), None)
        if shown_row is not None:
            self.call_after_refresh(self.scroll_to_widget, shown_row, animate=False)

    def _widgets(self, rows: list[Row], hidden: int, by_id: dict[str, EffortView]) -> list[Widget]:
        """What the list shows, in order: the rows and lines shown already, updated, and new ones."""
        old_items = {item.effort_id: item for item in self.query_children(EffortItem)}
        old_static = {key: w for w in self.query_children(Static) if (key := self._static_key(w)) is not None}
        widgets: list[Widget] = []
        section = None
        for row in rows:
            if row.section != section:
                section = row.section
                count = sum(1 for r in rows if r.section == section) + (hidden if section == "concluded" else 0)
                widgets.append(
                    self._static(old_static, f"{SECTION_TITLES[section]}  {count}", f"section-title -{section}")
                )
            item = old_items.pop(row.effort_id, None)
            if item is None:
                item = EffortItem(row, by_id[row.effort_id])
            else:
                item.show_row(row, by_id[row.effort_id])
            widgets.append(item)
        if hidden:
            widgets.append(self._static(old_static, f"+ {hidden} older — Ctrl+F searches them all", "efforts-more"))
        if not widgets:
            widgets.append(self._static(old_static, EMPTY_TEXT, "efforts-empty"))
        return widgets

    async def _arrange(self, widgets: list[Widget]) -> None:
        """The children in this order: the new ones mounted, the kept ones moved where they go."""
        mounting = []
        previous: Widget | None = None
        for widget in widgets:
            if widget.parent is not self:
                if previous is not None:
                    mounting.append(self.mount(widget, after=previous))
                else:
                    mounting.append(self.mount(widget, before=0) if self.children else self.mount(widget))
            elif previous is None:
                if self.children.index(widget) != 0:
                    self.move_child(widget, before=0)
            elif self.children.index(widget) != self.children.index(previous) + 1:
                self.move_child(widget, after=previous)
            previous = widget
        for mounted in mounting:
            await mounted

    @staticmethod
    def _static_key(widget: Widget) -> str | None:
        for key in ("section-title", "efforts-more", "efforts-empty"):
            if widget.has_class(key):
                return " ".join(sorted(widget.classes))
        return None

    def _static(self, old: dict[str, Static], text: str, classes: str) -> Static:
        """A title or note line: the one shown already, updated, else a new one."""
        widget = old.pop(" ".join(sorted(classes.split())), None)
        if widget is None:
            return Static(text, classes=classes)
        widget.update(text)
        return widget

    def item(self, effort_id: str) -> EffortItem | None:
        for item in self.query(EffortItem):
            if item.effort_id == effort_id:
                return item
        return None
