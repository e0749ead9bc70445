"""Settings, layered: defaults → config.toml → environment → command-line flags."""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from . import paths

DEFAULT_BUDGET_CAP = 16_000
BUDGET_WINDOW_FRACTION = 0.75


class ConfigError(ValueError):
    """The config file or an environment variable holds something unusable."""


@dataclass(frozen=True)
class Settings:
    model: str | None = None
    summary_model: str | None = None  # defaults to the chat model
    api_base: str | None = None
    token_budget: int | None = None  # None: min(16,000, 75% of the model's input window)
    decay_threshold: int = 3
    summary_eviction_threshold: int = 20
    ambient_window: int = 10
    max_tool_rounds: int = 8
    summary_max_tokens: int = 150
    message_max_tokens: int | None = None  # one logged message's share of the context; None: budget/4
    request_timeout: float = 120.0
    max_retries: int = 3  # transient provider errors (5xx, timeouts)
    max_rate_limit_wait: float = 900.0  # seconds a paused session waits before giving up
    theme: str = "textual-dark"
    # where the values came from, for the settings screen and error messages
    sources: dict[str, str] = field(default_factory=dict, compare=False, repr=False)

    @property
    def effective_summary_model(self) -> str | None:
        return self.summary_model or self.model

    def with_overrides(self, source: str, **values: Any) -> "Settings":
        clean = {k: v for k, v in values.items() if v is not None}
        if not clean:
            return self
        sources = dict(self.sources)
        sources.update({k: source for k in clean})
        return replace(self, sources=sources, **clean)


INT_KEYS = {
    "token_budget": 1,
    "decay_threshold": 1,
    "summary_eviction_threshold": 1,
    "ambient_window": 0,
    "max_tool_rounds": 1,
    "summary_max_tokens": 16,
    "message_max_tokens": 100,
    "max_retries": 0,
}
FLOAT_KEYS = {"request_timeout": 1.0, "max_rate_limit_wait": 0.0}
STR_KEYS = {"model", "summary_model", "api_base", "theme"}
CONFIG_KEYS = tuple(f.name for f in fields(Settings) if f.name != "sources")


def _coerce(key: str, value: Any, where: str) -> Any:
    if key in STR_KEYS:
        if not isinstance(value, str):
            raise ConfigError(f"{where}: '{key}' must be a string")
        return value.strip() or None
    if key in INT_KEYS:
        if isinstance(value, str):
            try:
                value = int(value.replace("_", "").strip())
            except ValueError:
                raise ConfigError(f"{where}: '{key}' must be a whole number, got {value!r}") from None
        if isinstance(value, bool) or not isinstance(value, int) or value < INT_KEYS[key]:
            raise ConfigError(f"{where}: '{key}' must be a whole number ≥ {INT_KEYS[key]}")
        return value
    if key in FLOAT_KEYS:
        try:
            value = float(value)
        except (TypeError, ValueError):
            raise ConfigError(f"{where}: '{key}' must be a number") from None
        if value < FLOAT_KEYS[key]:
            raise ConfigError(f"{where}: '{key}' must be ≥ {FLOAT_KEYS[key]}")
        return value
    raise ConfigError(f"{where}: unknown setting '{key}'")


def read_config_file(path: Path | None = None) -> dict[str, Any]:
    """The settings in config.toml (unknown keys are an error, so typos are caught)."""
    path = path or paths.config_file()
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        return {}
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: {exc}") from exc
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not valid UTF-8 text") from None
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from exc
    return {k: _coerce(k, v, str(path)) for k, v in data.items()}


ENV_VARS = {
    "CCM_MODEL": "model",
    "CCM_SUMMARY_MODEL": "summary_model",
    "CCM_API_BASE": "api_base",
    "CCM_TOKEN_BUDGET": "token_budget",
}


def load_settings(**flags: Any) -> Settings:
    """Defaults, then the config file, then CCM_* variables, then flags (None = not given)."""
    settings = Settings()
    settings = settings.with_overrides("config file", **read_config_file())
    env = {}
    for var, key in ENV_VARS.items():
        value = os.environ.get(var)
        if value:
            env[key] = _coerce(key, value, f"${var}")
    settings = settings.with_overrides("environment", **env)
    return settings.with_overrides("command line", **{k: v for k, v in flags.items() if k in CONFIG_KEYS})


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    text = str(value)
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    escaped = "".join(ch if ch >= " " or ch == "\t" else f"\\u{ord(ch):04x}" for ch in escaped)
    return f'"{escaped}"'


def save_config_file(values: dict[str, Any], path: Path | None = None) -> Path:
    """Write the given settings to config.toml (merged with what is there), atomically."""
    from .core.store import atomic_write_text

    path = path or paths.config_file()
    current = read_config_file(path)
    for key, value in values.items():
        if key not in CONFIG_KEYS:
            raise ConfigError(f"unknown setting '{key}'")
        if value is None or value == "":
            current.pop(key, None)
        else:
            current[key] = _coerce(key, value, "settings")
    lines = ["# ccm-tui settings (see README: Configuration)"]
    lines += [f"{k} = {_toml_value(current[k])}" for k in CONFIG_KEYS if k in current]
    atomic_write_text(path, "\n".join(lines) + "\n")
    return path


def default_budget(input_window: int | None) -> int:
    if not input_window or input_window <= 0:
        return DEFAULT_BUDGET_CAP
    return max(1_000, min(DEFAULT_BUDGET_CAP, int(input_window * BUDGET_WINDOW_FRACTION)))
