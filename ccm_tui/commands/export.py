"""``ccm-tui export``: efforts, ambient chat and notes as Markdown, JSON or JSON lines (the schema:
``core/views/data_export.py``, and the README's *Export*); ``ccm-tui import``: an export's efforts
landed in a session again (``restore/formats/ccm_export.py``)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .common import (
    EXIT_OK,
    CliError,
    UsageError,
    debug_option,
    require_session,
    session_dir_from,
    session_options,
)

FORMATS = ("md", "json", "jsonl")


def add_parser(sub: Any) -> None:
    p = sub.add_parser("export", help="export efforts, ambient chat and notes as Markdown, JSON or JSONL")
    session_options(p)
    debug_option(p)
    p.add_argument("--all-sessions", action="store_true", help="every session of the data directory")
    p.add_argument("--effort", metavar="ID", help="one effort only (its log and summary)")
    p.add_argument("--format", choices=FORMATS, default="md", help="md (default), json or jsonl")
    p.add_argument("-o", "--output", metavar="PATH", help="a file, or a directory (trailing /): one file per session")
    q = sub.add_parser("import", help="land the efforts of a ccm-tui export (JSON or JSONL) in a session")
    session_options(q)
    debug_option(q)
    q.add_argument("file", type=Path, help="the export file (ccm-tui export --format json|jsonl)")


def sessions_of(args: argparse.Namespace) -> list[Path]:
    from ..config import sessions_dir
    from ..core.api import session_paths

    if args.all_sessions:
        if getattr(args, "session_dir", None) or getattr(args, "session", None):
            raise UsageError("--all-sessions exports every session: leave out --session and --session-dir")
        if args.effort:
            raise UsageError("--effort names an effort of one session: leave out --all-sessions")
        found = session_paths(sessions_dir())
        if not found:
            raise CliError(f"no sessions in {sessions_dir()}")
        return found
    directory = session_dir_from(args)
    require_session(directory)
    return [directory]


def run(args: argparse.Namespace) -> int:
    from ..core.api import export_session, export_text, terminal_safe

    directories = sessions_of(args)
    if args.output is None:
        text = export_text(directories, args.format, args.effort)
        sys.stdout.write(terminal_safe(text) if sys.stdout.isatty() else text)
        return EXIT_OK
    written = export_session(directories, args.format, args.output, args.effort)  # (a str: keeps its "/")
    for path in written:
        print(f"wrote {path}")
    return EXIT_OK


def run_import(args: argparse.Namespace) -> int:
    from ..restore.formats.ccm_export import land_export

    directory = session_dir_from(args)
    try:
        text = args.file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CliError(f"cannot read {args.file}: {exc}") from None
    landed = land_export(directory, text, args.file)  # (what it raises is said by the CLI in one line)
    for line in landed.lines():
        print(line)
    return EXIT_OK
