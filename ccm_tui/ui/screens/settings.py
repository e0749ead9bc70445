"""Settings: model, API base, summary model, budget and thresholds, theme — saved to config.toml."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid, Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Button, Footer, Input, Select, Static

from ... import paths
from ...config import ConfigError, Settings, read_config_file, save_config_file

FIELDS: list[tuple[str, str, str, str]] = [
    # key, label, placeholder, input type
    ("model", "Model", "provider/model, e.g. openai/gpt-4o-mini or ollama/llama3.1", "text"),
    ("api_base", "API base URL", "only for proxies, Ollama or local servers, e.g. http://localhost:11434", "text"),
    ("summary_model", "Summary model", "same as the model (a cheaper one works well)", "text"),
    ("token_budget", "Token budget", "auto: the smaller of 16,000 and 75% of the model's window", "integer"),
    ("decay_threshold", "Auto-collapse after", "turns without reference (default 3)", "integer"),
    ("summary_eviction_threshold", "Evict summaries after", "turns without reference (default 20)", "integer"),
    ("ambient_window", "Ambient window", "exchanges of ambient chat kept in context (default 10)", "integer"),
]
OVERRIDDEN_BY = {"environment": "set by an environment variable", "command line": "set on the command line"}


class SettingsScreen(Screen[dict[str, Any] | None]):
    """Edits the config file. Dismisses with the saved values (typed; None = default), or None."""

    BINDINGS = [
        Binding("ctrl+s", "save", "Save", id="settings.save", priority=True),
        Binding("escape", "cancel", "Cancel", id="settings.cancel"),
    ]

    def __init__(self, settings: Settings) -> None:
        super().__init__()
        self.settings = settings

    def compose(self) -> ComposeResult:
        with Vertical(id="settings"):
            yield Static("Settings", classes="screen-title")
            yield Static(f"Saved to {paths.config_file()}", classes="screen-subtitle", markup=False)
            with VerticalScroll(id="settings-scroll"):
                with Grid(id="settings-grid"):
                    for key, label, placeholder, kind in FIELDS:
                        yield Static(label, classes="field-label")
                        value = getattr(self.settings, key)
                        with Vertical(classes="field"):
                            yield Input("" if value is None else str(value), placeholder=placeholder, type=kind,
                                        id=f"field-{key}", classes="field-input")
                            source = OVERRIDDEN_BY.get(self.settings.sources.get(key, ""))
                            if source:
                                yield Static(f"{source}: it wins over the file", classes="field-note")
                    yield Static("Theme", classes="field-label")
                    themes = sorted(self.app.available_themes)
                    yield Select([(t, t) for t in themes], value=self.app.theme, allow_blank=False, id="field-theme")
            yield Static("", id="settings-error")
            with Horizontal(id="settings-buttons"):
                yield Button("Save", id="save", variant="primary")
                yield Button("Cancel", id="cancel")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#field-model", Input).focus()

    def values(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, *_ in FIELDS:
            out[key] = self.query_one(f"#field-{key}", Input).value.strip() or None
        out["theme"] = self.query_one("#field-theme", Select).value
        return out

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_save() if event.button.id == "save" else self.action_cancel()

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
