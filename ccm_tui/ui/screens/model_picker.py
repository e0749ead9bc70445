"""The model picker ("Switch model…"): type to filter the models the --api-base server lists and the
ones litellm's map knows for the providers whose key is set; Enter switches to the highlighted one,
or checks a typed id that is not listed. Refused ids say why, and the dialog stays with the text.

The lists come from :mod:`ccm_tui.core.models.choices` (through ``core.api``), loaded in threads:
the server is asked with a short timeout and the map (1-2 MB of JSON) is read off the event loop.
"""

from __future__ import annotations

import asyncio

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from ...core.api import (
    CatalogEntry,
    Matches,
    ModelCheck,
    ModelGroup,
    asking_server,
    check_model,
    match_models,
    provider_groups,
    server_group,
)

TYPED = "typed"  # the option that checks the typed text as an id
WINDOW_WIDTH = 6  # "1.05M", "128k"
TOOLS_WIDTH = 8  # "no tools"

# the model switched to, its check (a caution may come with it), and where requests go (None: the provider)
Picked = tuple[str, ModelCheck, str | None]


def window_text(window: int | None) -> str:
    if not window:
        return ""
    if window >= 1_000_000:
        return f"{window / 1_000_000:.2f}".rstrip("0").rstrip(".") + "M"
    return f"{round(window / 1000)}k" if window >= 1000 else str(window)


def tools_text(tools: bool | None) -> str:
    return {True: "tools", False: "no tools", None: ""}[tools]


def describe(entry: CatalogEntry) -> str:
    """The detail line of a highlighted model: its window and tools, when known."""
    where = "from --api-base" if entry.served else "litellm's map"
    window = f"{entry.window:,}-token window" if entry.window else "window not stated"
    tools = {True: "calls tools", False: "cannot call tools", None: "tools not stated"}[entry.tools]
    return f"{entry.id} · {window} · {tools} ({where})"


class PickerList(OptionList, can_focus=False):
    """The list never takes the keyboard: typing always filters, ↑↓ move its highlight."""


class ModelPicker(ModalScreen[Picked | None]):
    """Dismisses with the model switched to and its check, or None on Escape."""

    BINDINGS = [
        Binding("escape", "cancel", "Cancel", id="dialog.cancel"),
        Binding("up", "move('cursor_up')", "Up", show=False),
        Binding("down", "move('cursor_down')", "Down", show=False),
        Binding("pageup", "move('page_up')", "Page up", show=False),
        Binding("pagedown", "move('page_down')", "Page down", show=False),
    ]

    def __init__(
        self, current: str | None, api_base: str | None, *, typed: str = "", server: str | None = None
    ) -> None:
        super().__init__(classes="dialog-screen")
        self.current = current
        self.api_base = api_base  # where this run's requests go now
        self.server_base = server or api_base  # the --api-base server whose models are listed
        self.typed = typed
        self.server: list[ModelGroup] = [asking_server()] if self.server_base else []
        self.providers: list[ModelGroup] = []
        self.map_loaded = False
        self.rows: list[CatalogEntry | str | None] = []  # per option: its model, TYPED, or None (a title)
        self.checking = ""  # the id being checked (Enter is ignored meanwhile)
        self.done = False

    def compose(self) -> ComposeResult:
        now = f"now {self.current}" if self.current else "no model yet"
        with Vertical(classes="dialog model-picker"):
            yield Static(f"Switch model · {now}", classes="dialog-title", markup=False)
            yield Input(self.typed, placeholder="type to filter, or a provider/model id", id="model-filter")
            yield Static("", id="model-status", markup=False)
            yield PickerList(id="model-list")
            yield Static("", id="model-detail", markup=False)
            yield Static("↑↓ choose · Enter switch (a typed id is checked first) · Esc cancel", classes="dialog-hint")

    def on_mount(self) -> None:
        self.query_one(Input).focus()
        self.refresh_list()
        if self.server_base:
            self.run_worker(self._load_server(self.server_base), group="model-list-server", exit_on_error=False)
        self.run_worker(self._load_map(), group="model-list-map", exit_on_error=False)

    async def _load_server(self, api_base: str) -> None:
        self.server = [await asyncio.to_thread(server_group, api_base, self.current)]
        self.refresh_list()

    async def _load_map(self) -> None:
        self.providers = await asyncio.to_thread(provider_groups, None, api_base=self.server_base)
        self.map_loaded = True
        self.refresh_list()

    # ------------------------------------------------------------------ the list
    def refresh_list(self) -> None:
        text = self.query_one(Input).value
        matches = match_models([*self.server, *self.providers], text)
        options: list[Option | None] = []
        self.rows = []
        typed = text.strip()
        if typed and matches.exact is None and not any(c.isspace() for c in typed):
            row = Content.assemble(("  ▸ ", "$accent"), ("check and use “", ""), (typed, "bold"), ("”", ""))
            options.append(Option(row))
            self.rows.append(TYPED)
        longest = max((len(e.id) for found in matches.groups for e in found.entries), default=0)
        width = min(self._id_width(), max(longest, 24))
        for found in matches.groups:
            if options:
                options.append(None)  # a rule between sources (it takes no index: rows stay in step)
            options.append(Option(Content.styled(found.group.title, "bold $text-primary"), disabled=True))
            self.rows.append(None)
            if found.group.note and (not typed or found.group.served):
                options.append(Option(Content.styled("  " + found.group.note, "italic $text-warning"), disabled=True))
                self.rows.append(None)
            for entry in found.entries:
                options.append(Option(self._row(entry, width)))
                self.rows.append(entry)
            if found.hidden:
                more = f"  … {found.hidden} more: type to narrow"
                options.append(Option(Content.styled(more, "$foreground-muted"), disabled=True))
                self.rows.append(None)
        listing = self.query_one(PickerList)
        listing.set_options(options)
        listing.highlighted = self._first_highlight(matches, text)
        self._show_status(matches)
        self._show_detail()

    def _id_width(self) -> int:
        width = self.query_one(PickerList).scrollable_content_region.width or 80
        return max(20, width - 2 - 2 - WINDOW_WIDTH - 1 - TOOLS_WIDTH - 1)

    def _row(self, entry: CatalogEntry, width: int) -> Content:
        model = entry.id if len(entry.id) <= width else entry.id[: width - 1] + "…"
        mark = ("● ", "$success bold") if entry.is_model(self.current) else ("  ", "")
        return Content.assemble(
            mark,
            (model.ljust(width), "bold" if entry.is_model(self.current) else ""),
            (" " + window_text(entry.window).rjust(WINDOW_WIDTH), "$foreground-muted"),
            (" " + tools_text(entry.tools).ljust(TOOLS_WIDTH), "$text-success" if entry.tools else "$foreground-muted"),
        )

    def _first_highlight(self, matches: Matches, text: str) -> int | None:
        """The named model, else (nothing typed) the current one, else the best match, else the typed id."""
        rows = self.rows
        wanted = matches.exact
        if wanted is None and not text.strip():
            wanted = next((r for r in rows if isinstance(r, CatalogEntry) and r.is_model(self.current)), None)
        for index, row in enumerate(rows):
            if row is wanted and wanted is not None:
                return index
        for index, row in enumerate(rows):
            if isinstance(row, CatalogEntry):
                return index
        return 0 if rows and rows[0] == TYPED else None

    def _show_status(self, matches: Matches) -> None:
        if self.checking:
            return
        if not self.map_loaded:
            self.set_status("Reading litellm's model map…")
            return
        listed = sum(len(g.entries) for g in self.providers + self.server)
        if matches.count == listed:
            self.set_status(f"{listed:,} models listed", "muted")
        else:
            self.set_status(f"{matches.count:,} of {listed:,} models match", "muted")

    def set_status(self, text: str, kind: str = "muted") -> None:
        status = self.query_one("#model-status", Static)
        status.update(text)
        status.set_class(kind == "error", "-error")

    def _show_detail(self) -> None:
        row = self.highlighted_row()
        if isinstance(row, CatalogEntry):
            detail = describe(row)
        elif row == TYPED:
            detail = f"Enter checks “{self.query_one(Input).value.strip()}” and switches if it can be used"
        else:
            detail = ""
        self.query_one("#model-detail", Static).update(detail)

    def highlighted_row(self) -> CatalogEntry | str | None:
        index = self.query_one(PickerList).highlighted
        return self.rows[index] if index is not None and 0 <= index < len(self.rows) else None

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.refresh_list()

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        self._show_detail()

    def on_resize(self) -> None:
        if self.is_mounted:
            self.refresh_list()  # the ids' column follows the dialog's width

    def action_move(self, how: str) -> None:
        getattr(self.query_one(PickerList), f"action_{how}")()

    # ------------------------------------------------------------------ choosing
    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        row = self.highlighted_row()
        if isinstance(row, CatalogEntry):
            self.choose(row.id, self._base_for(row))
        elif event.value.strip():
            self.choose(event.value.strip(), self.api_base)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()  # a click on a row
        row = self.rows[event.option_index] if event.option_index < len(self.rows) else None
        if isinstance(row, CatalogEntry):
            self.choose(row.id, self._base_for(row))
        elif row == TYPED:
            self.choose(self.query_one(Input).value.strip(), self.api_base)

    def _base_for(self, entry: CatalogEntry) -> str | None:
        """A server's model is asked of the server; a provider's of the provider itself."""
        return self.server_base if entry.served else None

    def choose(self, model: str, base: str | None) -> None:
        """Check ``model`` (sent to ``base``, or to its provider) off the event loop (a server's list can
        take seconds), then switch or say why not."""
        if self.checking or self.done:
            return
        self.checking = model
        self.set_status(f"Checking {model}…")
        self.run_worker(self._check(model, base), group="model-check", exclusive=True, exit_on_error=False)

    async def _check(self, model: str, base: str | None) -> None:
        try:
            check = await asyncio.to_thread(check_model, model, base)
        finally:
            self.checking = ""
        if self.done:
            return  # Escape came first
        if check.ok:
            self.done = True
            self.dismiss((model, check, base))
            return
        self.set_status(f"Not switched: {check.reason}", "error")
        self.query_one(Input).focus()

    def action_cancel(self) -> None:
        if not self.done:
            self.done = True
            self.dismiss(None)
