"""What every command module shares: exit codes, error types, session and settings lookup.

Kept apart from :mod:`ccm_tui.cli` (which can start the UI) so the UI-free
command modules (restore, replay) can use it without depending on the UI.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from . import paths

EXIT_OK, EXIT_RUNTIME, EXIT_USAGE = 0, 1, 2


class CliError(Exception):
    """A runtime failure reported as one line on stderr (exit 1)."""


class UsageError(Exception):
    """Bad arguments (exit 2)."""


def session_dir_from(args: argparse.Namespace) -> Path:
    """``--session-dir``, else ``$CCM_SESSION_DIR``, else the named (or default) session."""
    if getattr(args, "session_dir", None):
        return Path(args.session_dir).expanduser()
    if os.environ.get("CCM_SESSION_DIR"):
        return Path(os.environ["CCM_SESSION_DIR"]).expanduser()
    try:
        return paths.session_dir_for(getattr(args, "session", None) or paths.DEFAULT_SESSION)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def load_settings_from(args: argparse.Namespace):
    from .config import load_settings

    return load_settings(model=getattr(args, "model", None), api_base=getattr(args, "api_base", None))


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
