"""``ccm-tui mcp``: an MCP server on stdio over the user's efforts (never imports litellm or textual).

Reads never take the session's writer lock; ``--allow-writes`` adds remember and reopen,
which go through the session controller. stdout carries JSON-RPC only; logs and errors
go to stderr.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .. import config
from .common import EXIT_OK, UsageError, debug_option, seconds, session_dir_from


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "mcp",
        help="serve your efforts to other agents over MCP (stdio): search, read, list, status",
        description=(
            "An MCP server on stdin/stdout for Claude Code, Codex CLI, opencode, Cursor and any MCP client: "
            "search your efforts and chat, read their logs around a hit, list them, see the status. "
            "Example: claude mcp add ccm -- ccm-tui mcp"
        ),
    )
    group = p.add_mutually_exclusive_group()
    group.add_argument(
        "--session", metavar="NAME", default=argparse.SUPPRESS, help="named session (default: 'default')"
    )
    group.add_argument("--session-dir", metavar="PATH", type=Path, default=argparse.SUPPRESS, help="session directory")
    group.add_argument(
        "--all-sessions", action="store_true", help="serve every session under the data directory (results say which)"
    )
    p.add_argument(
        "--include-archived",
        action="store_true",
        help="with --all-sessions: archived sessions too (see 'sessions archive')",
    )
    p.add_argument(
        "--allow-writes",
        action="store_true",
        help="also offer remember (append a note to an effort) and reopen (through the session, taking its lock per write)",
    )
    p.add_argument(
        "--wait",
        type=seconds,
        default=None,
        metavar="SECONDS",
        help="with --allow-writes: how long a write waits while ccm-tui or send is mid-turn (default 10)",
    )
    debug_option(p)


def run(args: argparse.Namespace) -> int:
    from ..memory_server import WRITE_WAIT, Scope, ServerOptions, serve

    if args.all_sessions and (getattr(args, "session", None) or getattr(args, "session_dir", None)):
        raise UsageError("--all-sessions serves every session: leave out --session and --session-dir")
    if args.include_archived and not args.all_sessions:
        raise UsageError("--include-archived goes with --all-sessions")
    if args.all_sessions:
        scope = Scope(root=config.sessions_dir(), archived=args.include_archived)
    else:
        directory = session_dir_from(args)
        if not directory.is_dir():
            sys.stderr.write(
                f"ccm-tui mcp: no session at {directory} yet; the tools will say so until ccm-tui makes it\n"
            )
        scope = Scope(directory=directory)
    options = ServerOptions(
        scope=scope,
        settings=config.load_settings(),
        allow_writes=args.allow_writes,
        write_wait=WRITE_WAIT if args.wait is None else args.wait,
        debug=bool(getattr(args, "debug", False)),
    )
    serve(options)
    return EXIT_OK
