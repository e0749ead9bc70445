"""``ccm-tui search QUERY``: the ranking of ``search_efforts``, without a model (never imports litellm)."""

from __future__ import annotations

import argparse
import shutil
import sys
from typing import Any

from ..config import terminal_styles
from .common import (
    EXIT_OK,
    CliError,
    UsageError,
    debug_option,
    print_json,
    raw_stream,
    require_session,
    session_dir_from,
    session_options,
    whole_number,
)

MAX_LIMIT = 10_000  # results one search prints at most


def add_parser(sub: Any) -> None:
    p = sub.add_parser("search", help="ranked search over all efforts (no model needed)")
    session_options(p)
    debug_option(p)
    p.add_argument(
        "--limit", type=whole_number(1, MAX_LIMIT), default=10, metavar="N", help="results to show (default 10)"
    )
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument(
        "--all-sessions", action="store_true", help="search every session, the captured agents' sessions included"
    )
    p.add_argument("--agent", metavar="A", help="with --all-sessions: only sessions captured from agent A")
    p.add_argument("--project", metavar="P", help="with --all-sessions: only captured sessions of project P")
    p.add_argument(
        "--since", metavar="DATE", type=iso_date, help="with --all-sessions: captured sessions started on or after DATE"
    )
    p.add_argument(
        "--until",
        metavar="DATE",
        type=iso_date,
        help="with --all-sessions: captured sessions started on or before DATE",
    )
    p.add_argument("query", help="what to look for")


def iso_date(text: str) -> str:
    """An option's date, YYYY-MM-DD (argparse's ``type``)."""
    import datetime

    try:
        return datetime.date.fromisoformat(text.strip()).isoformat()
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date (YYYY-MM-DD)") from None


def styled_output(stream: Any) -> bool:
    """Bold for the matches only on a terminal (not in a pipe or a file, nor with ``NO_COLOR`` or a
    dumb terminal)."""
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and terminal_styles()


def run(args: argparse.Namespace) -> int:
    from ..core.api import DerivedError, hit_json, render_report, search_report, search_session

    if args.all_sessions:
        return _all_sessions(args)
    if args.agent or args.project or args.since or args.until:
        raise UsageError("--agent, --project, --since and --until go with --all-sessions")
    directory = session_dir_from(args)
    require_session(directory)
    try:
        hits = search_session(directory, args.query, args.limit)
    except DerivedError as exc:
        raise CliError(str(exc)) from None
    if args.json:
        print_json({"results": [hit_json(h) for h in hits]})
        return EXIT_OK
    report = search_report(hits)
    if styled_output(sys.stdout):  # the text is cleaned in the report; the bold is ours, written raw
        width = shutil.get_terminal_size().columns
        raw_stream(sys.stdout).write(render_report(report, width=width, bold=True) + "\n")
    else:
        print(render_report(report))
    return EXIT_OK


def _all_sessions(args: argparse.Namespace) -> int:
    from .. import config
    from ..core.api import CaptureFilter, captured_json, search_all_sessions

    if getattr(args, "session", None) or getattr(args, "session_dir", None):
        raise UsageError("--all-sessions searches every session: leave out --session and --session-dir")
    where = CaptureFilter(agent=args.agent, project=args.project, since=args.since, until=args.until)
    answer = search_all_sessions(config.sessions_dir(), args.query, args.limit, where=where)
    for line in answer.skipped:
        sys.stderr.write(f"ccm-tui search: {line}\n")
    results = [captured_json(found) for found in answer.hits]
    if args.json:
        print_json({"results": results})
        return EXIT_OK
    if not results:
        print(f"no results for {args.query!r} in any session")
    for rank, result in enumerate(results, 1):
        where_from = result["session"]
        if result.get("agent"):
            where_from += f" · {result['agent']}" + (f" · {result['project']}" if result.get("project") else "")
            where_from += f" · {result['started']}"
        print(f"{rank}. {result['id']} [{where_from}] {result['score']:.2f}")
        print(f"   {result['snippet']}")
        if result.get("resume"):
            print(f"   resume: {result['resume']}")
        if result.get("source_gone"):
            print("   (its original file is gone; what was captured stays)")
    return EXIT_OK
