"""The command line: one module per subcommand (its options, its printing, its exit codes).

Each module has ``add_parser(subparsers)`` and ``run(args) -> int``. Heavy
modules (litellm, textual) are imported only inside the commands that need
them, so ``search`` and ``status`` start fast; a command's module is imported
only when the command line may name it (``ccm-tui`` alone, the TUI, loads none).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from importlib import import_module
from types import ModuleType

from .. import __version__
from ..errors import CcmError
from .common import (
    EXIT_RUNTIME,
    EXIT_USAGE,
    TerminalSafe,
    UsageError,
    model_options,
    session_options,
)

Runner = Callable[[argparse.Namespace], int]

# The commands that print text (model replies, effort names, transcripts): through TerminalSafe.
# The TUI draws with Textual (its message bodies are cleaned), mcp speaks JSON-RPC on stdout.
TEXT_COMMANDS = frozenset({"send", "status", "search", "restore", "replay", "repair", "watch", "forget"})
TEXT_COMMANDS |= {"sessions", "effort"}  # session and effort names, summaries

# command → (its module, its runner); the modules in the order ``--help`` lists them
COMMANDS: dict[str, tuple[str, str]] = {
    "send": ("send", "run"),
    "status": ("status", "run"),
    "search": ("search", "run"),
    "restore": ("restore", "run"),
    "replay": ("replay", "run"),
    "demo": ("tui", "run_demo"),
    "repair": ("repair", "run"),
    "mcp": ("mcp", "run"),
    "watch": ("watch", "run"),
    "sessions": ("sessions", "run"),
    "effort": ("effort", "run"),
    "forget": ("forget", "run"),
    "export": ("export", "run"),
    "import": ("export", "run_import"),
}
VALUE_OPTIONS = frozenset({"--session", "--session-dir", "--model", "--api-base"})  # the TUI's own


def module(name: str) -> ModuleType:
    return import_module(f".{name}", __name__)


def runner(command: str | None) -> Runner:
    name, function = COMMANDS[command] if command else ("tui", "run")
    run: Runner = getattr(module(name), function)
    return run


def names_a_command(argv: list[str]) -> bool:
    """Whether the command line may name a subcommand (or asks for help): anything but the TUI's own
    options. The TUI then starts without loading the other commands' modules."""
    value_next = False
    for token in argv:
        if value_next:
            value_next = False
        elif token in ("-h", "--help", "--version"):
            return True
        elif token in VALUE_OPTIONS:
            value_next = True
        elif not token.startswith("-"):
            return True  # a command, or a typo that the full parser explains
    return False


def build_parser(*, commands: bool = True) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ccm-tui",
        description="Chat with any LLM; context managed by efforts (open → concluded summaries).",
    )
    parser.add_argument("--version", action="version", version=f"ccm-tui {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    session_options(parser, sub=False)
    model_options(parser, sub=False)
    if not commands:
        parser.set_defaults(command=None)
        return parser
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in dict.fromkeys(name for name, _ in COMMANDS.values()):
        module(name).add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(commands=names_a_command(argv))
    args = parser.parse_args(argv)
    debug = bool(getattr(args, "debug", False))
    streams = sys.stdout, sys.stderr
    if args.command in TEXT_COMMANDS:
        sys.stdout, sys.stderr = TerminalSafe(sys.stdout), TerminalSafe(sys.stderr)
    try:
        return _run(parser, args, debug)
    finally:
        sys.stdout, sys.stderr = streams


def _run(parser: argparse.ArgumentParser, args: argparse.Namespace, debug: bool) -> int:
    try:
        return runner(args.command)(args)
    except UsageError as exc:
        if exc.usage:
            parser.print_usage(sys.stderr)
        sys.stderr.write(f"ccm-tui: error: {exc}\n")
        return EXIT_USAGE
    except KeyboardInterrupt:
        sys.stderr.write("ccm-tui: interrupted\n")
        return 130
    except CcmError as exc:  # ours: its message is one line a user can read
        if debug:
            raise
        sys.stderr.write(f"ccm-tui: {error_line(exc, args)}\n")
        return EXIT_RUNTIME
    except Exception as exc:  # the system's (a file, a pipe) or a bug: named by its class
        if debug or (isinstance(exc, BrokenPipeError) and stdout_is_closed()):
            raise  # a closed stdout (``| head -1``): the console script ends quietly
        sys.stderr.write(f"ccm-tui: {error_line(exc, args)}\n")
        return EXIT_RUNTIME


def os_error_line(exc: OSError) -> str:
    """A bare ``[Errno N] …: 'path'`` in words: which path, what is wrong with it, the way out."""
    path = exc.filename
    if isinstance(exc, (FileExistsError, NotADirectoryError)):
        return f"{path} (or a directory above it) exists but is not a directory: move it away and try again"
    if isinstance(exc, IsADirectoryError):
        return f"{path} is a directory where a file belongs: move it away and try again"
    if isinstance(exc, PermissionError):
        return (
            f"cannot write {path}: permission denied (use --session-dir, or set CCM_HOME to a directory you can write)"
        )
    return f"{path}: {(exc.strerror or str(exc)).lower()}"


def stdout_is_closed() -> bool:
    """Whether stdout's reader has gone (its pipe reports an error); a broken pipe elsewhere (a
    socket to a provider) is an ordinary error."""
    import select

    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(event & select.POLLERR for _, event in poller.poll(0))
    except (AttributeError, OSError, ValueError):  # no poll (Windows), no file descriptor
        return True


def error_line(exc: Exception, args: argparse.Namespace) -> str:
    """One line that says what went wrong (and the way out, where there is one); secrets redacted."""
    from ..core.api import ManifestError, disk_full, redact

    ours = isinstance(exc, (CcmError, OSError, ValueError))  # (a bug's message is named by its class)
    message = str(exc) if ours else f"{type(exc).__name__}: {exc}"
    full = disk_full(exc)
    if full is not None:
        message = full
    elif isinstance(exc, OSError) and exc.filename and message.startswith("[Errno"):
        message = os_error_line(exc)
    if isinstance(exc, ManifestError):
        where = getattr(args, "session_dir", None) or "<session dir>"
        message += (
            f" — fix it by hand, or run 'ccm-tui repair --session-dir {where}' to rebuild it from the "
            "event log (nothing is lost)"
        )
    return redact(" ".join(message.split()))
