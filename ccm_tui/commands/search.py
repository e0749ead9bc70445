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
    p.add_argument("query", help="what to look for")


def styled_output(stream: Any) -> bool:
    """Bold for the matches only on a terminal (not in a pipe or a file, nor with ``NO_COLOR`` or a
    dumb terminal)."""
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and terminal_styles()


def run(args: argparse.Namespace) -> int:
    from ..core.api import SearchIndexError, hit_json, render_report, search_report, search_session

    directory = session_dir_from(args)
    require_session(directory)
    try:
        hits = search_session(directory, args.query, args.limit)
    except SearchIndexError as exc:
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
