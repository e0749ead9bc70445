"""``ccm-tui send MESSAGE``: one turn without the UI (scripts, pipes); banners and the reply on stdout."""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from typing import Any

from ..core import turn_events as te
from .common import (
    EXIT_OK,
    CliError,
    UsageError,
    debug_option,
    load_settings_from,
    model_options,
    print_json,
    require_model,
    session_dir_from,
    session_options,
)

DEFAULT_LOCK_WAIT = 15.0


def add_parser(sub: Any) -> None:
    p = sub.add_parser("send", help="run one turn without the UI and print banners and the reply")
    session_options(p)
    model_options(p)
    debug_option(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument(
        "--wait",
        type=float,
        default=DEFAULT_LOCK_WAIT,
        metavar="SECONDS",
        help=f"how long to wait for a session another process is writing to (default {DEFAULT_LOCK_WAIT:g})",
    )
    p.add_argument(
        "--retry-orphan",
        action="store_true",
        help="re-send the last message that never got a reply (after a crash or a failed turn)",
    )
    p.add_argument("message", nargs="?", help="the message ('-' reads standard input)")


class SendPrinter:
    """Prints a turn's events for a human: streamed text, banners on their own lines."""

    def __init__(self) -> None:
        self.at_line_start = True

    def __call__(self, event: te.TurnEvent) -> None:
        out = sys.stdout
        if isinstance(event, te.TextDelta):
            out.write(event.text)
            self.at_line_start = event.text.endswith("\n")
        elif isinstance(event, te.Banner):
            if not self.at_line_start:
                out.write("\n")
            out.write(event.text + "\n")
            self.at_line_start = True
        elif isinstance(event, te.Paused):
            wait = max(0, int(event.resume_at - time.time()))
            sys.stderr.write(f"SESSION PAUSED — {event.reason}; retrying in {wait} s (Ctrl+C to cancel)\n")
        elif isinstance(event, te.Resumed):
            sys.stderr.write("SESSION RESUMED\n")
        elif isinstance(event, te.Waiting):
            sys.stderr.write(f"{event.reason}\n")
        elif isinstance(event, te.RoundReset):
            if not self.at_line_start:
                out.write("\n")
            self.at_line_start = True
        out.flush()

    def finish(self) -> None:
        if not self.at_line_start:
            sys.stdout.write("\n")


def run(args: argparse.Namespace) -> int:
    from ..core.engine import UserInputError, load_model_library, start_engine

    message = args.message
    if args.retry_orphan and message:
        raise UsageError("give either a message or --retry-orphan, not both")
    if not args.retry_orphan and not message:
        raise UsageError("send needs a message (or '-' to read standard input)")
    if message == "-":
        message = sys.stdin.read()
    settings = load_settings_from(args)
    require_model(settings)
    if args.wait < 0:
        raise UsageError("--wait must be 0 or more seconds")
    load_model_library(settings)  # seconds of import, outside the session lock

    def waiting(pid: int | None, wait: float) -> None:
        who = f"pid {pid}" if pid else "another process"
        sys.stderr.write(f"ccm-tui: the session is in use by {who}; waiting up to {wait:g} s\n")
        sys.stderr.flush()

    engine = start_engine(session_dir_from(args), settings, lock_wait=args.wait, on_lock_wait=waiting)
    try:
        report = engine.recovery
        if report is not None and report.changed and not args.json:
            sys.stderr.write(report.one_line() + "\n")
        if args.retry_orphan:
            orphan = engine.unanswered_turn()
            if orphan is None:
                interrupted = report.interrupted if report is not None else None
                if interrupted is not None:
                    raise CliError(
                        f"turn {interrupted.turn} is not retried: its tools already ran "
                        f"({', '.join(interrupted.effects)}) and its message is logged in {interrupted.logged_to}; "
                        "send a new message to continue"
                    )
                raise CliError("there is no unanswered message to retry")
            message = orphan.text
        printer = None if args.json else SendPrinter()
        try:
            result = asyncio.run(engine.run_turn(message, printer))
        except UserInputError as exc:
            raise UsageError(str(exc)) from None
        except KeyboardInterrupt:
            raise CliError("cancelled; your message and the partial reply were logged") from None
        if printer is not None:
            printer.finish()
        if args.json:
            print_json(send_json(result, engine))
        if result.error:
            hint = " (your message is kept: ccm-tui send --retry-orphan)" if result.logged_to is None else ""
            raise CliError(f"{result.error}{hint}")
        return EXIT_OK
    finally:
        engine.close()


def send_json(result: Any, engine: Any) -> dict[str, Any]:
    """``send --json`` (contract: reply, banners, logged_to, context)."""
    active = engine.active_effort()
    data = {
        "turn": result.turn,
        "reply": result.reply,
        "banners": result.banners,
        "logged_to": result.logged_to,
        "active_effort": active.id if active else None,
        "tool_calls": result.tool_calls,
        "context": (result.context or engine.figures()).as_dict(),
        "request": result.request.as_dict() if result.request else None,
        "usage": engine.usage(),
    }
    if result.error:
        data["error"] = result.error
    return data
