"""First run: no model configured. Explains the setup and offers the settings or the offline demo."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Button, Footer, Markdown, Static

from ... import config

WELCOME = """\
# Welcome to ccm-tui

A chat for any LLM whose memory is organised in **efforts**: focused topics that get *concluded*.
A concluded effort is replaced by a short summary; its full log stays on disk, searchable,
expandable and reopenable — so the model works with a small, flat context however long you chat.

**No model is configured yet.** Pick one of these:

## 1. Choose a model

- on the command line: `ccm-tui --model openai/gpt-4o-mini`
- in the environment: `export CCM_MODEL=anthropic/claude-3-5-haiku-latest`
- or save it with **Settings** below (written to `{config}`)

## 2. Give the provider its key

| Provider | Model example | Key variable |
|---|---|---|
| OpenAI | `openai/gpt-4o-mini` | `OPENAI_API_KEY` |
| Anthropic | `anthropic/claude-3-5-haiku-latest` | `ANTHROPIC_API_KEY` |
| Google Gemini | `gemini/gemini-2.0-flash` | `GEMINI_API_KEY` |
| Mistral | `mistral/mistral-small-latest` | `MISTRAL_API_KEY` |
| Ollama (local, no key) | `ollama/llama3.1` | — add `--api-base http://localhost:11434` |
| Any OpenAI-compatible server | `openai/<model>` | `OPENAI_API_KEY` + `--api-base URL` |

Keys are read from the environment only; ccm-tui never writes them to disk.

## 3. Or just look around

The **demo** runs offline with a scripted model — no key, no network — and shows efforts being
opened, concluded, expanded, auto-collapsed and reopened while the token meter moves.
"""


class WelcomeScreen(Screen[str | None]):
    """Dismisses with "settings", "demo", "back" (Escape: to the chat) or None (quit)."""

    BINDINGS = [
        Binding("s", "choose('settings')", "Settings", id="welcome.settings"),
        Binding("d", "choose('demo')", "Run the demo", id="welcome.demo"),
        Binding("q", "choose('quit')", "Quit", id="welcome.quit"),
        Binding("escape", "choose('back')", "Back", id="welcome.back"),
    ]

    def compose(self) -> ComposeResult:
        with Vertical(id="welcome"):
            with VerticalScroll(id="welcome-scroll"):
                yield Markdown(WELCOME.format(config=config.config_file()), id="welcome-text")
            with Horizontal(id="welcome-buttons"):
                yield Button("Open settings", id="welcome-settings", variant="primary")
                yield Button("Run the demo", id="welcome-demo", variant="success")
                yield Button("Quit", id="welcome-quit")
            yield Static("s settings · d demo · q quit", classes="dialog-hint")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#welcome-settings", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_choose((event.button.id or "welcome-quit").removeprefix("welcome-"))

    def action_choose(self, choice: str) -> None:
        self.dismiss(None if choice == "quit" else choice)
