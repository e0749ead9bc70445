"""``ccm-tui watch [--once] [--root DIR]...``: capture every agent's sessions, without a model.

It finds the agents' session stores under the home directory (the README's import table),
the project roots of the ``watch_roots`` setting (aider histories, SpecStory folders) and the
folders given with ``--root`` (every transcript in them), backfills what exists with progress
on stderr (files, turns, MB/s, time left), then follows the files with watchfiles as the agents
write them, until Ctrl+C or SIGTERM. ``--once`` backfills and exits 0. Every file that cannot
be captured is one line; ``watch --status`` prints what the last run said (the data
directory's ``watch-status.json``).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

from .. import config
from .common import EXIT_OK, debug_option

STATUS_FILE = "watch-status.json"
PROBLEMS_KEPT = 200


def add_parser(sub: Any) -> None:
    p = sub.add_parser("watch", help="capture every agent's sessions as they are written (no model needed)")
    debug_option(p)
    p.add_argument("--once", action="store_true", help="backfill what exists, then exit")
    p.add_argument(
        "--root", action="append", type=Path, default=[], metavar="DIR", help="also capture every transcript under DIR"
    )
    p.add_argument("--no-home", action="store_true", help="leave out the agents' stores in the home directory")
    p.add_argument("--recapture", action="store_true", help="capture again the sessions `forget` removed")
    p.add_argument("--status", action="store_true", help="print what the last run of watch said, then exit")
    p.add_argument("--quiet", action="store_true", help="no progress line; problems and the last line only")


def run(args: argparse.Namespace) -> int:
    from ..restore.capture import CaptureOptions, Capturer
    from ..restore.watching import Summaries, backfill, find_stores, follow

    if args.status:
        return _print_status()
    os.umask(0o077)  # captures are copies the user did not make: readable by the user only
    settings = config.load_settings()
    sessions_root = config.sessions_dir()
    capturer = Capturer(sessions_root, settings, CaptureOptions.from_settings(settings, recapture=args.recapture))
    report = ConsoleReport(quiet=args.quiet)
    stores = find_stores(settings, args.root, home_stores=not args.no_home)
    capturer.load()
    stop = threading.Event()
    previous = _on_sigterm(stop)
    summaries = Summaries(sessions_root, settings, report)
    try:
        backfill(capturer, stores, report, stop)
        summaries.maybe()
        if args.once or stop.is_set():
            report.done("backfill")
            return EXIT_OK
        follow(capturer, stores, report, stop, summaries)
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
    report.done("stopped")
    return EXIT_OK


def _on_sigterm(stop: threading.Event) -> Any:
    def ended(_signum: int, _frame: Any) -> None:
        stop.set()

    try:
        return signal.signal(signal.SIGTERM, ended)
    except ValueError:  # not the main thread
        return signal.SIG_DFL


class ConsoleReport:
    """Progress on stderr, one line per problem, and the status file ``watch --status`` prints."""

    def __init__(self, *, quiet: bool = False) -> None:
        self.quiet = quiet
        self.tty = bool(getattr(sys.stderr, "isatty", lambda: False)()) and not quiet
        self.counts: Counter[str] = Counter()
        self.turns = 0
        self.problems: list[str] = []
        self.said: set[str] = set()
        self.started = time.time()
        self.total_files = 0
        self.total_bytes = 0
        self.files_done = 0
        self.bytes_done = 0
        self.began = time.monotonic()
        self.last_draw = 0.0
        self.following = False

    def start(self, files: int, size: int, *, follow: bool = False) -> None:
        self.total_files, self.total_bytes = files, size
        self.files_done = self.bytes_done = 0
        self.began = time.monotonic()
        self.following = follow
        if not follow:
            self.say(f"backfill: {files:,} file(s), {size / 2**20:,.1f} MB")

    def result(self, result: Any) -> None:
        from ..restore.capture import CaptureOutcome

        self.counts[result.outcome.value] += 1
        self.turns += result.turns
        self.files_done += 1
        self.bytes_done += result.size
        if result.outcome in (
            CaptureOutcome.FAILED,
            CaptureOutcome.NOT_TRANSCRIPT,
            CaptureOutcome.EXCLUDED,
            CaptureOutcome.FORGOTTEN,
            CaptureOutcome.MOVED,
        ):
            self.problem(result.line())
        elif self.following and result.outcome is not CaptureOutcome.UNCHANGED:
            self.say(result.line())
        self._draw()

    def problem(self, line: str) -> None:
        if line in self.said:  # the same file, the same problem: said once
            return
        self.said.add(line)
        self.problems = (self.problems + [line])[-PROBLEMS_KEPT:]
        self._clear()
        print(line, flush=True)

    def say(self, line: str) -> None:
        self._clear()
        if not self.quiet:
            print(line, flush=True)

    def _draw(self) -> None:
        if not self.tty or self.following:
            return
        now = time.monotonic()
        if now - self.last_draw < 0.2 and self.files_done < self.total_files:
            return
        self.last_draw = now
        sys.stderr.write("\r\x1b[K" + self.progress())
        sys.stderr.flush()

    def progress(self) -> str:
        elapsed = max(time.monotonic() - self.began, 1e-6)
        rate = self.bytes_done / elapsed
        left = (self.total_bytes - self.bytes_done) / rate if rate > 0 else 0.0
        return (
            f"files {self.files_done:,}/{self.total_files:,} · turns {self.turns:,} · "
            f"{rate / 2**20:,.1f} MB/s · {left:,.0f} s left"
        )

    def _clear(self) -> None:
        if self.tty and not self.following:
            sys.stderr.write("\r\x1b[K")

    def batch_done(self) -> None:
        self._write_status("following")

    def done(self, how: str) -> None:
        self._clear()
        counts = ", ".join(f"{n:,} {what}" for what, n in sorted(self.counts.items()))
        elapsed = time.monotonic() - self.began
        print(f"{how}: {self.turns:,} turn(s) captured in {elapsed:,.1f} s ({counts or 'no files'})", flush=True)
        self._write_status(how)

    def _write_status(self, state: str) -> None:
        from ..atomic_file import atomic_write_text

        data = {
            "state": state,
            "pid": os.getpid(),
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.started)),
            "updated": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "files": dict(self.counts),
            "turns": self.turns,
            "problems": self.problems,
        }
        try:
            atomic_write_text(config.data_home() / STATUS_FILE, json.dumps(data, indent=1) + "\n")
        except OSError as exc:
            print(f"cannot write {STATUS_FILE}: {exc.strerror or exc}", flush=True)


def _print_status() -> int:
    path = config.data_home() / STATUS_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        print("watch has not run yet")
        return EXIT_OK
    except (OSError, ValueError) as exc:
        print(f"{path} cannot be read: {exc}")
        return EXIT_OK
    files = ", ".join(f"{n} {what}" for what, n in sorted((data.get("files") or {}).items()))
    print(f"watch {data.get('state')} (pid {data.get('pid')}, updated {data.get('updated')}): "
          f"{data.get('turns', 0)} turn(s), {files or 'no files'}")  # fmt: skip
    for line in data.get("problems") or []:
        print(line)
    return EXIT_OK
