"""``ccm-tui forget``: take a text, an effort or lines of one out of every byte of a session.

``--text STRING`` everywhere; ``--effort ID`` the whole effort; ``--effort ID --lines A-B`` those lines
of its log. A terminal is asked first (how many occurrences, how many files); ``--yes`` skips the
question; without a terminal and without ``--yes`` the forget is refused. Never prints the text.
"""

from __future__ import annotations

import argparse
import re
import sys
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

_RANGE = re.compile(r"\s*(\d{1,9})\s*(?:-\s*(\d{1,9})\s*)?")


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "forget", help="forget a text, an effort or lines of one: out of every file of the session, index included"
    )
    session_options(p)
    debug_option(p)
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--text", metavar="STRING", help="forget this text wherever it is (case-sensitive)")
    what.add_argument("--effort", metavar="ID", help="forget this effort (with --lines: those lines of its log)")
    p.add_argument("--lines", metavar="A-B", help="with --effort: forget lines A to B (1-based) of its log")
    p.add_argument("--yes", action="store_true", help="do not ask (scripts); without a terminal it is required")


def line_range(text: str) -> tuple[int, int]:
    match = _RANGE.fullmatch(text)
    if match is None:
        raise UsageError(f"--lines {text!r}: give A-B (or A), e.g. --lines 3-7")
    first = int(match.group(1))
    last = int(match.group(2) or first)
    if first < 1 or last < first:
        raise UsageError(f"--lines {text!r}: give A-B with 1 <= A <= B")
    return first, last


def request_from(args: argparse.Namespace) -> Any:
    from ..core.api import ForgetRequest

    if args.lines is not None and args.effort is None:
        raise UsageError("--lines needs --effort ID")
    if args.text is not None:
        if not args.text.strip():
            raise UsageError("--text: the text is empty")
        return ForgetRequest.of_text(args.text)
    if args.lines is not None:
        return ForgetRequest.of_lines(args.effort, *line_range(args.lines))
    return ForgetRequest.of_effort(args.effort)


def confirm(question: str) -> bool:
    if not sys.stdin.isatty():
        raise CliError("forget asks before it deletes: run it in a terminal, or pass --yes")
    sys.stderr.write(question + " [y/N] ")
    sys.stderr.flush()
    answer = sys.stdin.readline()
    return answer.strip().lower() in ("y", "yes")


def run(args: argparse.Namespace) -> int:
    from ..core.api import forget

    directory = session_dir_from(args)
    require_session(directory)
    request = request_from(args)
    try:
        if not args.yes:
            if not sys.stdin.isatty():
                raise CliError("forget asks before it deletes: run it in a terminal, or pass --yes")
            plan = forget(directory, request, dry_run=True)
            if not plan.occurrences and not plan.files:
                print(plan.line(request))
                return EXIT_OK
            if not confirm(plan.question(request)):
                print("nothing forgotten")
                return EXIT_OK
        report = forget(directory, request)
    except (LookupError, ValueError) as exc:  # (no such effort, lines it does not have)
        raise CliError(str(exc).strip("'\"")) from None
    print(report.line(request))
    return EXIT_OK
