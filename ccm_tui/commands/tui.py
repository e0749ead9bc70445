"""The TUI (no subcommand) and ``ccm-tui demo`` (the offline scripted demo)."""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import sys
from collections.abc import Iterator
from typing import Any

from .common import debug_option, load_settings_from, session_dir_from


def add_parser(sub: Any) -> None:
    p = sub.add_parser("demo", help="offline scripted demo of the TUI (no key, no network)")
    debug_option(p)


def run(args: argparse.Namespace, *, demo: bool = False) -> int:
    # The start makes many objects and frees few: no garbage collection until the first frame is
    # painted (the app turns it back on then; ~15% of the time to the first frame).
    gc.disable()
    try:
        with typed_ahead() as typed:
            from ..ui.app import run_app

            settings = None if demo else load_settings_from(args)
            directory = None if demo else session_dir_from(args)
            return run_app(settings=settings, session_dir=directory, demo=demo, typed=typed)
    finally:
        gc.enable()


@contextlib.contextmanager
def typed_ahead() -> Iterator[str]:
    """What was typed before the app holds the terminal — one types at once after a crash — as text
    for the input (an Enter in it sends). From now on the terminal passes keys through as they come
    (an Enter stays an Enter: in line mode the tty turns it into a line feed, which Textual reads as
    Ctrl+J, a new line, and the message would stay unsent); its settings come back at the end."""
    try:
        import termios
    except ImportError:  # not a POSIX terminal
        yield ""
        return
    try:
        fd = sys.stdin.fileno()
        saved = termios.tcgetattr(fd) if os.isatty(fd) else None
    except (OSError, ValueError, termios.error):
        saved = None
    if saved is None:
        yield ""
        return
    mode = [*saved[:6], list(saved[6])]
    mode[0] &= ~termios.ICRNL
    mode[3] &= ~(termios.ICANON | termios.ECHO)
    mode[6][termios.VMIN], mode[6][termios.VTIME] = 0, 0
    try:
        termios.tcsetattr(fd, termios.TCSANOW, mode)
        typed = _pending(fd)
    except (OSError, termios.error):
        typed = ""
    try:
        yield typed
    finally:
        with contextlib.suppress(OSError, termios.error):
            termios.tcsetattr(fd, termios.TCSANOW, saved)


def _pending(fd: int) -> str:
    import select

    poller = select.poll()  # (select() refuses descriptors over 1,023)
    poller.register(fd, select.POLLIN)
    chunks: list[bytes] = []
    while poller.poll(0) and sum(map(len, chunks)) < 100_000:
        data = os.read(fd, 65536)
        if not data:
            break
        chunks.append(data)
    return b"".join(chunks).decode("utf-8", "replace")


def run_demo(args: argparse.Namespace) -> int:
    return run(args, demo=True)
