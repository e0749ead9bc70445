"""Settings: model, API base, summary model, budget and thresholds, theme — saved to config.toml."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Button, Footer, Input, Select, Static

from ... import config
from ...config import ConfigError, Settings, read_config_file, save_config_file

FIELDS: list[tuple[str, str, str, str, str]] = [
    # key, label, placeholder, input type, help
    (
        "model",
        "Model",
        "e.g. openai/gpt-4o-mini",
        "text",
        "provider/model as litellm knows it: anthropic/claude-3-5-haiku-latest, ollama/llama3.1 …",
    ),
    (
        "api_base",
        "API base URL",
        "empty: the provider's default",
        "text",
        "for proxies, Ollama (http://localhost:11434) or other OpenAI-compatible servers",
    ),
    (
        "summary_model",
        "Summary model",
        "empty: the same as the model",
        "text",
        "writes effort summaries when they are concluded; a cheaper model works well",
    ),
    (
        "token_budget",
        "Token budget",
        "empty: automatic",
        "integer",
        "hard cap on the context sent; automatic = min(16,000, 75% of the model's window)",
    ),
    (
        "decay_threshold",
        "Auto-collapse after",
        "3",
        "integer",
        "turns without mention before an expanded effort folds back to its summary",
    ),
    (
        "summary_eviction_threshold",
        "Evict summaries after",
        "20",
        "integer",
        "turns without mention before a summary leaves memory (it stays searchable)",
    ),
    (
        "ambient_window",
        "Ambient window",
        "10",
        "integer",
        "exchanges of ambient chat (greetings, asides) kept in context",
    ),
]
OVERRIDDEN_BY = {"environment": "set by an environment variable", "command line": "set on the command line"}


class SettingsScreen(Screen[dict[str, Any] | None]):
    """Edits the config file. Dismisses with the values saved (only those changed; None = removed), or None.

    ``saved`` is what config.toml holds (the inputs show it); ``settings`` are the running ones, whose
    sources say which fields an environment variable or a command-line flag overrides.
    """

    BINDINGS = [
        Binding("ctrl+s", "save", "Save", id="settings.save", priority=True),
        Binding("escape", "cancel", "Cancel", id="settings.cancel"),
    ]

    def __init__(self, settings: Settings, saved: dict[str, Any] | None = None) -> None:
        super().__init__()
        self.settings = settings
        self.saved = dict(saved or {})
        self.initial = {key: "" if self.saved.get(key) is None else str(self.saved[key]) for key, *_ in FIELDS}

    def compose(self) -> ComposeResult:
        with Vertical(id="settings"):
            yield Static("Settings", classes="screen-title")
            yield Static(f"Saved to {config.config_file()}", classes="screen-subtitle", markup=False)
            with VerticalScroll(id="settings-scroll"):
                for key, label, placeholder, kind, help in FIELDS:
                    with Horizontal(classes="field-row"):
                        yield Static(label, classes="field-label")
                        with Vertical(classes="field"):
                            yield Input(
                                self.initial[key],
                                placeholder=placeholder,
                                type=kind,  # type: ignore[arg-type]
                                id=f"field-{key}",
                                classes="field-input",
                            )
                            yield Static(help, classes="field-help")
                            source = OVERRIDDEN_BY.get(self.settings.sources.get(key, ""))
                            if source:
                                yield Static(f"{source}: it wins over the file", classes="field-note")
                with Horizontal(classes="field-row"):
                    yield Static("Theme", classes="field-label")
                    with Vertical(classes="field"):
                        themes = sorted(self.app.available_themes)
                        yield Select(
                            [(t, t) for t in themes], value=self.app.theme, allow_blank=False, id="field-theme"
                        )
                        yield Static("also switchable from the command palette (Ctrl+P → theme)", classes="field-help")
            yield Static("", id="settings-error", markup=False)
            with Horizontal(id="settings-buttons"):
                yield Button("Save", id="settings-save", variant="primary")
                yield Button("Cancel", id="settings-cancel")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#field-model", Input).focus()

    def values(self) -> dict[str, Any]:
        """The fields the user changed (so values from elsewhere are never written to the file)."""
        out: dict[str, Any] = {}
        for key, *_rest in FIELDS:
            value = self.query_one(f"#field-{key}", Input).value.strip()
            if value != self.initial[key].strip():
                out[key] = value or None
        theme = self.query_one("#field-theme", Select).value
        if theme != self.saved.get("theme", self.app.theme):
            out["theme"] = theme
        return out

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_save() if event.button.id == "settings-save" else self.action_cancel()

    def action_save(self) -> None:
        values = self.values()
        try:
            save_config_file(values)
            saved = read_config_file()
        except (ConfigError, OSError) as exc:
            self.query_one("#settings-error", Static).update(f"Not saved: {exc}")
            return
        self.dismiss({key: saved.get(key) for key in values})

    def action_cancel(self) -> None:
        self.dismiss(None)
