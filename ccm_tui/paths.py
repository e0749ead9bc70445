"""Where ccm-tui keeps things: XDG locations and the files shipped with the package."""

from __future__ import annotations

import os
from pathlib import Path

APP_DIR = "ccm-tui"
DEFAULT_SESSION = "default"


def _xdg(var: str, fallback: str) -> Path:
    value = os.environ.get(var)
    if value and os.path.isabs(value):
        return Path(value)
    return Path.home() / fallback


def config_file() -> Path:
    """``$CCM_CONFIG`` or ``$XDG_CONFIG_HOME/ccm-tui/config.toml``."""
    override = os.environ.get("CCM_CONFIG")
    if override:
        return Path(override).expanduser()
    return _xdg("XDG_CONFIG_HOME", ".config") / APP_DIR / "config.toml"


def data_home() -> Path:
    """``$CCM_HOME`` or ``$XDG_DATA_HOME/ccm-tui``."""
    override = os.environ.get("CCM_HOME")
    if override:
        return Path(override).expanduser()
    return _xdg("XDG_DATA_HOME", ".local/share") / APP_DIR


def sessions_dir() -> Path:
    return data_home() / "sessions"


def session_dir_for(name: str) -> Path:
    """The directory of a named session. Names are plain words, never paths."""
    clean = name.strip()
    if not clean or clean in {".", ".."} or "/" in clean or "\\" in clean or "\x00" in clean:
        raise ValueError(f"invalid session name {name!r}: use letters, digits, '-' or '_'")
    return sessions_dir() / clean


def _resource_dir(name: str) -> Path:
    """A data directory shipped with the package (wheel) or found in the checkout."""
    here = Path(__file__).resolve().parent
    for candidate in (here / name, here.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"ccm-tui is installed without its {name}/ directory (looked in {here})")


def prompts_dir() -> Path:
    return _resource_dir("prompts")


def styles_dir() -> Path:
    return _resource_dir("styles")


def prompt(name: str) -> str:
    """The text of ``prompts/<name>.md``."""
    return (prompts_dir() / f"{name}.md").read_text(encoding="utf-8")
