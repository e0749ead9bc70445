"""The TUI's watcher (``watch_in_tui = true``): ``ccm-tui watch`` in a thread while the app is open.

It backfills, then follows the agents' stores as ``watch`` does (:mod:`ccm_tui.restore.watching`),
saying nothing on the screen (what it could not capture is kept in :attr:`WatchWorker.report`); it
stops when the app quits. Model summaries stay with ``ccm-tui watch``: the TUI's watcher makes no
model call.
"""

from __future__ import annotations

import threading

from ..config import Settings, sessions_dir


class WatchWorker:
    def __init__(self, settings: Settings) -> None:
        from ..restore.watching import QuietWatch

        self.settings = settings
        self.stop = threading.Event()
        self.report = QuietWatch()
        self.followed = threading.Event()  # the backfill is over: the files are followed
        self.failed = ""
        self.thread = threading.Thread(target=self._run, name="ccm-watch", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def close(self, timeout: float = 5.0) -> None:
        self.stop.set()
        if self.thread.is_alive():
            self.thread.join(timeout)

    def _run(self) -> None:
        from ..errors import CcmError
        from ..restore.capture import CaptureOptions, Capturer
        from ..restore.watching import backfill, find_stores, follow

        try:
            capturer = Capturer(sessions_dir(), self.settings, CaptureOptions.from_settings(self.settings))
            stores = find_stores(self.settings, [])
            capturer.load()
            backfill(capturer, stores, self.report, self.stop)
            self.followed.set()
            if stores and not self.stop.is_set():
                follow(capturer, stores, self.report, self.stop)
        except (CcmError, OSError) as exc:  # the chat goes on; the watcher says why it stopped
            self.failed = " ".join(str(exc).split())
            self.followed.set()
