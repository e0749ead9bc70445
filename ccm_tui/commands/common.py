"""What every command shares: exit codes, error types, the common options, session and settings lookup.

Exit codes: 0 ok, 2 usage error, 1 runtime error with a one-line cause on
stderr (a traceback only with ``--debug``).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .. import config
from ..config import Settings
from ..core.api import json_safe, terminal_safe
from ..errors import CcmError

EXIT_OK, EXIT_RUNTIME, EXIT_USAGE = 0, 1, 2


class CommandError(CcmError):
    """A command line that was used wrongly or could not run (the one line printed on stderr)."""


class CliError(CommandError):
    """A runtime failure reported as one line on stderr (exit 1)."""


class UsageError(CommandError):
    """Bad arguments (exit 2): printed after the usage, or (``usage=False``: what is wrong is the
    message given, not how the command was called) as one line."""

    def __init__(self, message: str, *, usage: bool = True) -> None:
        super().__init__(message)
        self.usage = usage


MAX_WAIT_SECONDS = 86_400.0  # a day: longer than any wait an option asks for


def seconds(text: str) -> float:
    """An option's seconds (``--wait``): a finite number from 0 to a day; ``nan``, ``inf`` and ``-1``
    are refused by argparse with this message."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value) or not 0 <= value <= MAX_WAIT_SECONDS:
        raise argparse.ArgumentTypeError(f"must be a number of seconds from 0 to {MAX_WAIT_SECONDS:g}, got {text!r}")
    return value


def whole_number(low: int, high: int) -> Callable[[str], int]:
    """An option's whole number from ``low`` to ``high`` (argparse's ``type``)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be from {low:,} to {high:,}, got {text}")
        return value

    return parse


def session_options(p: argparse.ArgumentParser, *, sub: bool = True) -> None:
    # On subcommands the default is SUPPRESS, so `ccm-tui --session-dir X send hi` keeps X.
    default = argparse.SUPPRESS if sub else None
    group = p.add_mutually_exclusive_group()
    group.add_argument(
        "--session", metavar="NAME", default=default, help="named session under the data directory (default: 'default')"
    )
    group.add_argument("--session-dir", metavar="PATH", type=Path, default=default, help="session directory to use")


def model_options(p: argparse.ArgumentParser, *, sub: bool = True) -> None:
    default = argparse.SUPPRESS if sub else None
    p.add_argument(
        "--model", metavar="M", default=default, help="litellm model, e.g. openai/gpt-4o-mini or ollama/llama3.1"
    )
    p.add_argument(
        "--api-base",
        metavar="URL",
        default=default,
        help="API base URL passed to litellm (proxies, Ollama, local servers)",
    )


def debug_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks on errors")


def session_dir_from(args: argparse.Namespace) -> Path:
    """``--session-dir``, else ``$CCM_SESSION_DIR``, else the named (or default) session."""
    try:
        return config.session_dir(getattr(args, "session_dir", None), getattr(args, "session", None))
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def load_settings_from(args: argparse.Namespace) -> Settings:
    return config.load_settings(model=getattr(args, "model", None), api_base=getattr(args, "api_base", None))


def require_model(settings: Settings, alternative: str = "") -> None:
    if not settings.model:
        raise CliError(
            'no model configured: pass --model, set CCM_MODEL, or add model = "..." to '
            f"{config.config_file()}{alternative} (see README: Configuration)"
        )


def require_session(directory: Path, hint: str = "") -> None:
    if not directory.is_dir():
        raise CliError(f"no session at {directory}{hint}")


def print_json(data: Any) -> None:
    sys.stdout.write(json_safe(json.dumps(data, ensure_ascii=False, indent=2)) + "\n")


class TerminalSafe:
    """A text stream that writes model- and file-sourced text without control sequences
    (:func:`~ccm_tui.core.text.terminal.terminal_safe`); the commands print through it.
    The app's own sequences (a progress bar redrawn in place) go to ``raw``."""

    def __init__(self, raw: Any) -> None:
        self.raw = raw

    def write(self, text: str) -> int:
        return self.raw.write(terminal_safe(text))

    def __getattr__(self, name: str) -> Any:  # flush, isatty, fileno, encoding, buffer …
        return getattr(self.raw, name)


def raw_stream(stream: Any) -> Any:
    """The stream under a :class:`TerminalSafe` (for the app's own escape sequences)."""
    return stream.raw if isinstance(stream, TerminalSafe) else stream
