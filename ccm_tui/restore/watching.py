"""The watch loop as a library: the folders watched, the backfill, following the files with watchfiles,
and the rounds of model summaries — for ``ccm-tui watch`` and the TUI's watcher (``watch_in_tui``).

What it says goes to a :class:`WatchReport` (the command prints it; the TUI's watcher keeps it quiet).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any, Protocol

from ccm_tui import config
from ccm_tui.restore.capture import split_list

DEBOUNCE_MS = 200
SUMMARY_EVERY = 600.0  # seconds between rounds of model summaries (each within the budget)
RUST_TIMEOUT_MS = 1000  # the watcher wakes this often when nothing changes (a check of the stop event)


class WatchReport(Protocol):
    """Where the loop says what it does."""

    def start(self, files: int, size: int, *, follow: bool = False) -> None: ...

    def result(self, result: Any) -> None: ...

    def problem(self, line: str) -> None: ...

    def say(self, line: str) -> None: ...

    def batch_done(self) -> None: ...


class QuietWatch:
    """A report that keeps the problems (the last :data:`KEPT`) and says nothing."""

    KEPT = 200

    def __init__(self) -> None:
        self.problems: list[str] = []
        self.turns = 0

    def start(self, files: int, size: int, *, follow: bool = False) -> None:
        return None

    def result(self, result: Any) -> None:
        self.turns += result.turns
        if result.outcome.problem:
            self.problem(result.line())

    def problem(self, line: str) -> None:
        self.problems = (self.problems + [line])[-self.KEPT :]

    def say(self, line: str) -> None:
        return None

    def batch_done(self) -> None:
        return None


def find_stores(settings: config.Settings, roots: list[Path], *, home_stores: bool = True) -> list[Store]:
    """The folders watched: the agents' stores in the home directory, the project roots of the
    ``watch_roots`` setting, and ``roots`` (every transcript in them)."""
    from ccm_tui.restore.stores import agent_stores, home

    stores = [Store(p) for p in agent_stores(home())] if home_stores else []
    stores += [Store(Path(p).expanduser(), project=True) for p in split_list(settings.watch_roots)]
    stores += [Store(p.expanduser()) for p in roots]
    return [s for s in stores if s.path.exists()]


class Store:
    """A folder watched: an agent's store or a root (``project``: only aider histories and SpecStory files)."""

    def __init__(self, path: Path, *, project: bool = False) -> None:
        self.path = path
        self.project = project

    def keeps(self, path: Path) -> bool:
        if not self.project:
            return True
        return path.name == ".aider.chat.history.md" or ".specstory" in path.parts


def walk(stores: list[Store], report: WatchReport) -> list[Path]:
    from ccm_tui.restore.stores import candidate_files

    skip = config.data_home()
    files: dict[Path, None] = {}
    for store in stores:
        walked = candidate_files(store.path, skip=skip)
        for line in walked.problems:
            report.problem(line)
        files.update((f, None) for f in walked.files if store.keeps(f))
    return list(files)


def backfill(capturer: Any, stores: list[Store], report: WatchReport, stop: threading.Event) -> None:
    """Capture what the stores hold now, with progress."""
    files = walk(stores, report)
    sizes = {}
    for path in files:
        try:
            sizes[path] = path.stat().st_size
        except OSError:
            sizes[path] = 0
    report.start(len(files), sum(sizes.values()))

    def chosen() -> Any:
        for path in files:
            if stop.is_set():
                return
            yield path

    capturer.capture(chosen(), report.result)


class Summaries:
    """Model summaries of the captures, within the budget of the settings (see
    :mod:`ccm_tui.restore.capture_summaries`): after the backfill, then every :data:`SUMMARY_EVERY` s."""

    def __init__(self, sessions_root: Path, settings: config.Settings, report: WatchReport) -> None:
        self.sessions_root, self.settings, self.report = sessions_root, settings, report
        self.last = 0.0
        self.on = bool(settings.effective_summary_model) and (
            settings.capture_summary_calls_per_hour > 0 or settings.capture_summary_calls_per_day > 0
        )

    def maybe(self) -> None:
        if not self.on or time.monotonic() - self.last < SUMMARY_EVERY and self.last:
            return
        from ccm_tui.errors import CcmError
        from ccm_tui.restore.capture_summaries import LEDGER, summarize_captures

        self.last = time.monotonic()
        try:
            summarize_captures(self.sessions_root, self.settings, config.data_home() / LEDGER, say=self.report.say)
        except (CcmError, OSError) as exc:
            self.report.problem(f"summaries: {' '.join(str(exc).split())}")


def follow(
    capturer: Any, stores: list[Store], report: WatchReport, stop: threading.Event, summaries: Summaries | None = None
) -> None:
    """Capture the files the agents write, as watchfiles reports them, until ``stop``."""
    import watchfiles

    from ccm_tui.restore.discovery import TRANSCRIPT_SUFFIXES, is_opencode_storage_detail

    skip = str(config.data_home())
    paths = [str(s.path) for s in stores]
    live = False
    for changes in watchfiles.watch(
        *paths, stop_event=stop, debounce=DEBOUNCE_MS, step=50, raise_interrupt=False, recursive=True,
        yield_on_timeout=True, rust_timeout=RUST_TIMEOUT_MS,
    ):  # fmt: skip
        if not live:  # the watcher is live: what changed since the backfill walked is caught up once
            live = True
            report.start(0, 0, follow=True)
            capturer.capture(walk(stores, report), report.result)
            report.say(f"following {len(stores)} folder(s); Ctrl+C ends")
            report.batch_done()
        if summaries is not None:
            summaries.maybe()
        if not changes:
            continue
        changed: dict[Path, None] = {}
        for change, name in changes:
            path = Path(name)
            if name.startswith(skip) or path.suffix.lower() not in TRANSCRIPT_SUFFIXES:
                continue
            if is_opencode_storage_detail(path) or not any(s.keeps(path) for s in stores if _under(path, s.path)):
                continue
            if change == watchfiles.Change.deleted:
                if str(path.absolute()) in capturer.known:
                    report.problem(f"{path}: deleted or moved; what was captured stays")
                continue
            changed[path] = None
        if changed:
            report.start(len(changed), 0, follow=True)
            capturer.capture(list(changed), report.result)
            report.batch_done()


def _under(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents
