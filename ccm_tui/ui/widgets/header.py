"""The top bar: app name, session, model, and a DEMO badge in the offline demo (all plain text: a
session or an effort may be named ``[wip] auth``)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.reactive import reactive
from textual.widgets import Static


class AppHeader(Horizontal):
    session_name: reactive[str] = reactive("")
    model: reactive[str] = reactive("")
    demo: reactive[bool] = reactive(False)
    status: reactive[str] = reactive("")

    def compose(self) -> ComposeResult:
        yield Static("◆ ccm-tui", classes="header-brand", markup=False)
        yield Static("DEMO", classes="header-demo", markup=False)
        yield Static("", classes="header-session", markup=False)
        yield Static("", classes="header-status", markup=False)
        yield Static("", classes="header-model", markup=False)

    def watch_session_name(self, value: str) -> None:
        self.query_one(".header-session", Static).update(f"session  {value}" if value else "")

    def watch_model(self, value: str) -> None:
        self.query_one(".header-model", Static).update(f"model  {value}" if value else "no model configured")
        self.set_class(not value, "-no-model")

    def watch_demo(self, value: bool) -> None:
        self.query_one(".header-demo", Static).display = value
        self.set_class(value, "-demo")

    def watch_status(self, value: str) -> None:
        self.query_one(".header-status", Static).update(value)
