"""``ccm-tui sessions list|rename|delete|archive|unarchive|fork``: the sessions of the data directory,
managed from the command line as Ctrl+S does in the TUI (never imports litellm or textual)."""

from __future__ import annotations

import argparse
import sys
import time
from datetime import UTC, datetime
from typing import Any

from .. import config
from .common import EXIT_OK, EXIT_RUNTIME, UsageError, debug_option, print_json, whole_number


def add_parser(sub: Any) -> None:
    p = sub.add_parser("sessions", help="list, rename, delete, archive or fork the sessions of the data directory")
    debug_option(p)
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    listing = actions.add_parser("list", help="the sessions, most recently used first")
    listing.add_argument("--json", action="store_true", help="print JSON")
    listing.add_argument("--archived", action="store_true", help="archived sessions too (marked)")
    rename = actions.add_parser("rename", help="rename a session (refused while it is in use)")
    rename.add_argument("name")
    rename.add_argument("new_name")
    delete = actions.add_parser("delete", help="delete a session and every file it holds (asks first)")
    delete.add_argument("name")
    delete.add_argument("--yes", action="store_true", help="do not ask (scripts)")
    archive = actions.add_parser("archive", help="keep a session out of the picker and of --all-sessions")
    archive.add_argument("name")
    archive.add_argument("--undo", action="store_true", help="bring it back (same as unarchive)")
    unarchive = actions.add_parser("unarchive", help="bring an archived session back")
    unarchive.add_argument("name")
    fork = actions.add_parser("fork", help="a new session holding what another held after a turn")
    fork.add_argument("name")
    fork.add_argument("new_name")
    fork.add_argument(
        "--turn", type=whole_number(0, 1 << 62), metavar="N", help="the last turn it keeps (default: every turn)"
    )
    for action in actions.choices.values():
        debug_option(action)


def _iso(seconds: float | None) -> str | None:
    if seconds is None:
        return None
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def run(args: argparse.Namespace) -> int:
    root = config.sessions_dir()
    action = args.action
    if action == "list":
        return _list(root, args)
    from ..core.api import archive_session, check_delete, delete_session, fork_session, rename_session

    try:  # a name, never a path: "../elsewhere" names no session of the data directory
        named = config.session_name(args.name) == args.name
    except ValueError:
        named = False
    if not named:
        raise UsageError(f"{args.name!r} is not a session name ('ccm-tui sessions list' shows them)", usage=False)
    if action == "rename":
        target = rename_session(root, args.name, args.new_name)
        print(f"{args.name} is now {target.name}")
    elif action == "delete":
        path = check_delete(root, args.name)
        if not args.yes and not _confirm(f"Delete the session {args.name!r} and every file it holds ({path})?"):
            sys.stderr.write("ccm-tui: nothing deleted\n")
            return EXIT_RUNTIME
        delete_session(root, args.name)
        print(f"deleted {args.name}")
    elif action in ("archive", "unarchive"):
        archived = action == "archive" and not args.undo
        changed = archive_session(root, args.name, archived=archived)
        state = "archived" if archived else "not archived"
        print(f"{args.name} is {state}" if changed else f"{args.name} was already {state}")
    elif action == "fork":
        report = fork_session(root, args.name, args.new_name, args.turn)
        print(
            f"{report.path.name}: {args.name} up to turn {report.turn} "
            f"({report.efforts} effort{'s' if report.efforts != 1 else ''}, {report.lines:,} log lines)"
        )
    return EXIT_OK


def _confirm(question: str) -> bool:
    """Ask on a terminal; anywhere else (a script, a pipe) nothing is deleted without ``--yes``."""
    if not sys.stdin.isatty():
        raise UsageError("not deleted: pass --yes to delete without a terminal to ask on", usage=False)
    sys.stderr.write(f"{question} [y/N] ")
    sys.stderr.flush()
    answer = sys.stdin.readline().strip().lower()
    return answer in ("y", "yes")


def _list(root: Any, args: argparse.Namespace) -> int:
    from ..core.api import last_used_ago, list_sessions, shown_size

    sessions = list_sessions(root, archived=args.archived)
    if args.json:
        print_json(
            {
                "sessions": [
                    {
                        "name": s.name,
                        "path": str(s.path),
                        "last_used": _iso(s.last_used),
                        "size": s.size,
                        "derived_size": s.derived_size,
                        "efforts": s.efforts,
                        "turns": s.turns,
                        "archived": s.archived,
                    }
                    for s in sessions
                ]
            }
        )
        return EXIT_OK
    if not sessions:
        print(f"no sessions in {root}")
        return EXIT_OK
    now = time.time()
    width = max(len(s.name) for s in sessions)
    for s in sessions:
        efforts = "–" if s.efforts is None else f"{s.efforts:,}"
        turns = "–" if s.turns is None else f"{s.turns:,}"
        mark = "  (archived)" if s.archived else ""
        print(
            f"{s.name.ljust(width)}  {last_used_ago(s, now):>13}  {shown_size(s.size):>8}  "
            f"{efforts:>7} efforts  {turns:>7} turns{mark}"
        )
    return EXIT_OK
