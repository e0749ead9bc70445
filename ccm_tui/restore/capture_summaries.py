"""Model summaries of captured sessions, later and within a budget of calls per hour and per day.

A capture lands with an extractive summary (:mod:`.capture`). With a model configured and a budget
(``capture_summary_calls_per_hour`` / ``_per_day``), ``watch`` replaces those summaries with the
turn-by-turn ones ``restore`` makes (no evidence search: nothing is read beside the transcript),
newest session first: the estimate is said first (sessions waiting, calls they need, what the
budget allows now), and a session whose calls do not fit what is left of the hour's or the day's
budget waits for the next round. The calls made are kept in ``capture-summary-calls.json`` in the
data directory (a timestamp per call, the last day's), so the budget holds across restarts.
Without a model, or with a budget of 0, nothing is sent anywhere.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ccm_tui.atomic_file import atomic_write_text
from ccm_tui.config import Settings
from ccm_tui.restore.capture import CAPTURE_KIND
from ccm_tui.restore.stores import CAPTURE_PREFIX

from ..errors import CcmError

LEDGER = "capture-summary-calls.json"
HOUR, DAY = 3600.0, 86400.0


@dataclass
class Ledger:
    """The model calls made for capture summaries in the last day (their times)."""

    path: Path
    calls: list[float] = field(default_factory=list)

    @classmethod
    def load(cls, path: Path) -> Ledger:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            calls = [float(t) for t in data.get("calls", []) if isinstance(t, int | float)]
        except (OSError, ValueError, AttributeError):
            calls = []
        return cls(path, calls)

    def used(self, within: float, now: float) -> int:
        return sum(1 for t in self.calls if now - t < within)

    def add(self, count: int, now: float) -> None:
        self.calls = [t for t in self.calls if now - t < DAY] + [now] * count
        atomic_write_text(self.path, json.dumps({"calls": self.calls}) + "\n")


@dataclass
class SummaryRun:
    sessions_waiting: int = 0
    summarized: int = 0
    calls: int = 0
    lines: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Waiting:
    session: Path
    effort_id: str
    file: Path
    captured_at: str


def waiting(sessions_root: Path) -> list[_Waiting]:
    """Captured sessions whose summary is still the extractive one, newest first."""
    from ccm_tui.core.engine.reader import SessionReader

    found: list[_Waiting] = []
    if not sessions_root.is_dir():
        return found
    for directory in sorted(sessions_root.iterdir()):
        if not directory.name.startswith(CAPTURE_PREFIX) or not directory.is_dir():
            continue
        with SessionReader(directory, Settings()) as reader:
            for entry in reader.efforts():
                source = entry.view.source or {}
                if source.get("kind") == CAPTURE_KIND and source.get("summary_offline") and source.get("file"):
                    found.append(
                        _Waiting(directory, entry.view.id, Path(source["file"]), str(source.get("captured_at", "")))
                    )
    found.sort(key=lambda w: w.captured_at, reverse=True)
    return found


def summarize_captures(
    sessions_root: Path,
    settings: Settings,
    ledger_path: Path,
    *,
    say: Callable[[str], None],
    llm: Any = None,
    now: Callable[[], float] = time.time,
) -> SummaryRun:
    """Summarize what waits, newest first, within the budget; each line said through ``say``."""
    from ccm_tui.restore.importer import Importer, ImportOptions, parse_file
    from ccm_tui.restore.progress import Quiet

    run = SummaryRun()
    per_hour, per_day = settings.capture_summary_calls_per_hour, settings.capture_summary_calls_per_day
    if not settings.effective_summary_model or (per_hour <= 0 and per_day <= 0):
        return run
    items = waiting(sessions_root)
    run.sessions_waiting = len(items)
    if not items:
        return run
    ledger = Ledger.load(ledger_path)
    options = ImportOptions(skip_evidence_search=True, max_searches=0)
    summary_settings = settings.with_overrides("capture", model=settings.effective_summary_model)
    importer = (
        Importer(items[0].session, summary_settings, options, llm)
        if llm is not None
        else Importer.with_settings_model(items[0].session, summary_settings, options)
    )
    plans = []
    for item in items:
        try:
            parsed = parse_file(item.file, options)
        except CcmError as exc:
            run.lines.append(f"{item.file}: no model summary ({exc})")
            continue
        plans.append((item, parsed, importer.plan(parsed)))
    total = sum(plan.calls for _, _, plan in plans)
    say(
        f"summaries: {len(plans)} captured session(s) wait for a model summary, up to {total:,} call(s); "
        f"budget {per_hour or '∞'} an hour, {per_day or '∞'} a day "
        f"({ledger.used(HOUR, now())} and {ledger.used(DAY, now())} used)"
    )
    for item, parsed, plan in plans:
        moment = now()
        left_hour = per_hour - ledger.used(HOUR, moment) if per_hour > 0 else None
        left_day = per_day - ledger.used(DAY, moment) if per_day > 0 else None
        if any(left is not None and plan.calls > left for left in (left_hour, left_day)):
            say(f"summaries: the budget is spent for now; {len(plans) - run.summarized} session(s) wait")
            break
        before = importer.calls
        try:
            outcome = importer.summarize(item.file, parsed, Quiet())
        except CcmError as exc:
            ledger.add(importer.calls - before, now())
            run.lines.append(f"{item.file}: no model summary ({exc})")
            continue
        made = importer.calls - before
        ledger.add(made, now())
        run.calls += made
        _replace_summary(item, outcome.session.summary, settings)
        run.summarized += 1
        say(f"summarized {item.session.name}/{item.effort_id} ({made} call(s))")
    for line in run.lines:
        say(line)
    return run


def _replace_summary(item: _Waiting, summary: str, settings: Settings) -> None:
    from ccm_tui.core.engine.opening import NO_MODEL, start_engine

    engine = start_engine(item.session, settings, llm=NO_MODEL, lock_wait=30.0, probe_model_window=False)
    clean = False
    try:
        effort = engine.effort(item.effort_id)
        if effort is None:
            return
        source = dict(effort.source or {})
        source["summary_offline"] = False
        source["summary_model"] = settings.effective_summary_model
        engine.append_capture(item.effort_id, [], source, summary)
        clean = True
    finally:
        engine.close(clean=clean)
