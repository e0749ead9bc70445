"""``ccm-tui send MESSAGE``: one turn without the UI (scripts, pipes); banners and the reply on stdout."""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from typing import Any

from ..core.api import Banner, Outcome, Paused, Resumed, RoundReset, StreamCleaner, TextDelta, TurnEvent, Waiting
from .common import (
    EXIT_OK,
    CliError,
    UsageError,
    debug_option,
    load_settings_from,
    model_options,
    print_json,
    require_model,
    seconds,
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
        type=seconds,
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
        self.cleaner = StreamCleaner()  # an escape sequence split between deltas goes whole

    def __call__(self, event: TurnEvent) -> None:
        out = sys.stdout
        if isinstance(event, TextDelta):
            piece = self.cleaner.feed(event.text)
            out.write(piece)
            self.at_line_start = piece.endswith("\n") if piece else self.at_line_start
        elif isinstance(event, Banner):
            if not self.at_line_start:
                out.write("\n")
            out.write(event.text + "\n")
            self.at_line_start = True
        elif isinstance(event, Paused):
            wait = max(0, int(event.resume_at - time.time()))
            sys.stderr.write(f"SESSION PAUSED — {event.reason}; retrying in {wait} s (Ctrl+C to cancel)\n")
        elif isinstance(event, Resumed):
            sys.stderr.write("SESSION RESUMED\n")
        elif isinstance(event, Waiting) and event.cause != "retry":  # a retry: its banner says it
            sys.stderr.write(f"{event.reason}\n")
        elif isinstance(event, RoundReset):
            if not self.at_line_start:
                out.write("\n")
            self.at_line_start = True
        out.flush()

    def text(self, text: str) -> None:
        """A block of text on its own lines (a slash command's answer)."""
        if not self.at_line_start:
            sys.stdout.write("\n")
        sys.stdout.write(text.rstrip("\n") + "\n")
        self.at_line_start = True

    def finish(self) -> None:
        if not self.at_line_start:
            sys.stdout.write("\n")


def run(args: argparse.Namespace) -> int:
    from ..core.api import RetryOrphan, SendMessage, SlashError, check_manifest, load_model_library, parse

    message = args.message
    if args.retry_orphan and message:
        raise UsageError("give either a message or --retry-orphan, not both")
    if not args.retry_orphan and not message:
        raise UsageError("send needs a message (or '-' to read standard input)")
    if message == "-":
        message = sys.stdin.read()
    try:
        intent = RetryOrphan() if args.retry_orphan else parse(message or "")
    except SlashError as exc:  # the message is wrong, not the command line: its reason alone
        raise UsageError(str(exc), usage=False) from None
    settings = load_settings_from(args)
    if isinstance(intent, (SendMessage, RetryOrphan)):  # slash commands need no model (a summary falls back)
        require_model(settings)
    manifest = session_dir_from(args) / "manifest.yaml"
    if manifest.exists():  # a broken file is said at once, not after seconds of importing the model library
        check_manifest(manifest)
    load_model_library(settings)  # seconds of import, outside the session lock
    return asyncio.run(_send(args, settings, intent))


async def _send(args: argparse.Namespace, settings: Any, intent: Any) -> int:
    from ..core.api import OpenOptions, SessionController, SlashCommand

    options = OpenOptions(hold_lock=True, lock_wait=args.wait, retry_delays=(), probe_model_window=True)
    controller = SessionController(session_dir_from(args), settings, options=options)
    printer = None if args.json else SendPrinter()
    listener = SendListener(printer, args.wait)
    controller.subscribe(listener)
    try:
        report = await controller.open()
        if report.changed and not args.json:
            sys.stderr.write(report.one_line() + "\n")
        try:
            if isinstance(intent, SlashCommand):
                outcome = await controller.command(intent)
            else:
                outcome = await controller.run(intent)
        except asyncio.CancelledError:  # Ctrl+C: the turn was cancelled and has written what it had
            raise CliError("cancelled; your message and the partial reply were logged") from None
        if printer is not None:
            if outcome.work == "command" and outcome.reply:
                printer.text(outcome.reply)  # what /search, /status and /help answer
            printer.finish()
        if outcome.cause == "input":
            raise UsageError(outcome.reason, usage=False)
        if args.json:
            print_json(send_json(outcome, controller.snapshot, listener.suggestions))
        if outcome.cancelled:
            raise CliError("cancelled; your message and the partial reply were logged")
        if outcome.failed:
            hint = " (your message is kept: ccm-tui send --retry-orphan)" if outcome.given_back else ""
            if outcome.cause in ("refused", "locked"):
                hint = ""
            raise CliError(f"{outcome.reason}{hint}")
        return EXIT_OK
    finally:
        await controller.close()


class SendListener:
    """What ``send`` shows of the controller's events: the turn (through the printer) and a
    one-time note on stderr while another process holds the session."""

    def __init__(self, printer: SendPrinter | None, wait: float) -> None:
        self.printer = printer
        self.wait = wait
        self.told_locked = False
        self.suggestions: list[Any] = []  # efforts the app proposes (the model does not manage them)

    def __call__(self, event: Any) -> None:
        from ..core.api import Phase, StateChanged, Suggestion

        if isinstance(event, Suggestion):
            self.suggestions.append(event)
            if self.printer is not None and not event.taken:
                sys.stderr.write(f"ccm-tui: {suggestion_hint(event.proposal)}\n")
        elif isinstance(event, StateChanged):
            state = event.state
            if state.phase is Phase.LOCKED and state.work is None and not self.told_locked:
                self.told_locked = True
                who = f"pid {state.holder}" if state.holder else "another process"
                sys.stderr.write(f"ccm-tui: the session is in use by {who}; waiting up to {self.wait:g} s\n")
                sys.stderr.flush()
        elif isinstance(event, TurnEvent) and self.printer is not None:
            self.printer(event)


def suggestion_hint(proposal: Any) -> str:
    """A proposal as the command line can take it up (slash commands)."""
    name = proposal.name.replace("-", " ")
    if proposal.kind == "switch":
        return f"the topic moved on: /conclude {proposal.conclude} then /open {name}"
    return f"a new topic: /open {name} keeps it as an effort"


def send_json(outcome: Outcome, snapshot: Any, suggestions: list[Any] | None = None) -> dict[str, Any]:
    """``send --json`` (contract: reply, banners, logged_to, context)."""
    status = snapshot.status if snapshot is not None else None
    active = status.active if status is not None else None
    context = outcome.context or (snapshot.figures if snapshot is not None else None)
    data = {
        "turn": outcome.turn,
        "reply": outcome.reply,
        "banners": list(outcome.banners),
        "logged_to": outcome.logged_to,
        "active_effort": active.id if active else None,
        "tool_calls": list(outcome.tool_calls),
        "context": context.as_dict() if context is not None else None,
        "request": outcome.request.as_dict() if outcome.request else None,
        "usage": dict(snapshot.usage) if snapshot is not None else {},
    }
    if outcome.cut:
        data["cut"] = True  # the reply stopped at reply_max_tokens (its banner says so)
    if suggestions:
        data["suggestions"] = [
            {
                "kind": s.proposal.kind,
                "name": s.proposal.name,
                "conclude": s.proposal.conclude,
                "hint": suggestion_hint(s.proposal),
                "taken": s.taken,  # auto_efforts carried it out
            }
            for s in suggestions
        ]
    if outcome.work == "command":
        data["command"] = outcome.text  # a slash command ran: no model was asked
        data["result"] = outcome.result
    if not outcome.ok:
        data["error"] = outcome.reason
    return data
