"""The floor for start-up: a bare Textual app (a header, a text, a footer), measured by
``bench_startup.py`` exactly like ccm-tui. Not a part of ccm-tui."""

from textual.app import App, ComposeResult
from textual.widgets import Footer, Header, Static


class Bare(App[None]):
    BINDINGS = [("ctrl+q", "quit", "Quit")]

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("bare textual app ready")
        yield Footer()


if __name__ == "__main__":
    Bare().run()
