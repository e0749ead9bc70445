"""The files shipped with the package: prompts and styles (user locations are in :mod:`.config`)."""

from __future__ import annotations

from pathlib import Path


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
