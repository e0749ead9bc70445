"""Importing coding-agent transcripts as concluded efforts: the use case behind ``ccm-tui restore``.

An :class:`Importer` holds what every import of one run shares — the session
directory, the settings, the options, the model (any :class:`ChatModel`, wrapped
in a :class:`~.pipeline.ModelCallMeter` for the cost report) — and imports:

* :meth:`Importer.import_parsed`: one parsed transcript; failures raise
  :class:`RestoreFailed` (:class:`ProviderRefused` when the provider refuses the
  key or the model);
* :meth:`Importer.import_one`: one file, whatever happens to it, as an
  :class:`ImportResult` (not a transcript, no turns, already imported, imported,
  failed);
* :meth:`Importer.import_many`: several files, one effort each. One bad file
  never stops the others; a provider that refuses the key or the model stops
  the run, and the files after it are "not tried".

Importing is idempotent: a transcript whose bytes (and ``max_turns``) were
imported before is skipped before any model work, unless ``force``. Before the
first model call of a file its call plan (:mod:`.call_plan`) is said
(``progress.message``); a plan over the budget (``max_calls``) goes ahead only if
``progress.approve`` says so, else the file fails with the estimate and the way on,
and no file makes more calls than its plan's ceiling. A parse
that looks wrong (:mod:`.sanity`) is said at once, before any model work: each
warning is a ``progress.message`` naming the file, and the result's
``warnings``, whatever the import's status. Landing
goes through :func:`.landing.land` (the engine's door). Progress goes through
the protocols of :mod:`.progress`; nothing here prints.
"""

from __future__ import annotations

import asyncio
import signal
import threading
import time
import warnings
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from ccm_tui.config import Settings
from ccm_tui.core.manifest.effort import ManifestError
from ccm_tui.core.models.interface import ChatModel
from ccm_tui.core.storage.durable import StoreError
from ccm_tui.core.text.tokens import TokenCounter
from ccm_tui.restore import landing
from ccm_tui.restore.call_plan import DEFAULT_MAX_CALLS, CallPlan, RunPlan, plan_calls
from ccm_tui.restore.landing import AlreadyImported, Landed
from ccm_tui.restore.pipeline import MAX_SUMMARY_RETRIES, ModelCallMeter, RestoreOutcome
from ccm_tui.restore.progress import BulkProgress, ImportProgress
from ccm_tui.restore.results import (
    ImportResult,
    ImportRow,
    ImportStatus,
    NotATranscript,
    ParsedFile,
    ProviderRefused,
    RestoreCost,
    RestoreFailed,
)
from ccm_tui.restore.turns import ParsedTranscript, TranscriptError, UnknownTranscriptFormat

DEFAULT_MAX_SEARCHES = 8


@dataclass(frozen=True)
class ImportOptions:
    """How to import (the ``restore`` flags that are not about where or with which model)."""

    format: str = "auto"  # a name of parse.FORMATS, or auto
    max_turns: int | None = None  # import only the first N turns
    root: Path | None = None  # where the evidence search may read files (None: the transcript's project, if safe)
    skip_evidence_search: bool = False
    max_searches: int = DEFAULT_MAX_SEARCHES
    force: bool = False  # import a copy of a transcript imported before
    retry_base: float = 1.0  # first back-off delay (seconds) after a transient provider fault
    max_calls: int = DEFAULT_MAX_CALLS  # model calls per file before asking (progress.approve)

    @property
    def skip_evidence(self) -> bool:
        return self.skip_evidence_search or self.max_searches == 0


# ----------------------------------------------------------------------------- parsing (no model)
def parse_file(path: Path, options: ImportOptions) -> ParsedTranscript:
    """Parse one transcript file. Raises :class:`NotATranscript` when no format recognises it and
    :class:`RestoreFailed` when it is missing or cannot be parsed."""
    from ccm_tui.restore.parse import parse_transcript

    if not path.is_file():
        raise RestoreFailed(f"no transcript file at {path}")
    try:
        return parse_transcript(path, fmt=options.format or "auto", max_turns=options.max_turns)
    except UnknownTranscriptFormat as exc:
        raise NotATranscript(str(exc)) from None
    except TranscriptError as exc:
        raise RestoreFailed(str(exc)) from None


def parse_only(paths: Sequence[Path], options: ImportOptions) -> list[ParsedFile]:
    """Parse each file (no model, nothing written): what was parsed, or why not."""
    files: list[ParsedFile] = []
    for path in paths:
        try:
            files.append(ParsedFile(path, parse_file(path, options)))
        except RestoreFailed as exc:
            files.append(ParsedFile(path, error=str(exc)))
    return files


def check_session(directory: Path) -> None:
    """Fail early (before any model work) when the session's manifest cannot be read."""
    try:
        landing.check_session_dir(directory)
    except (ManifestError, StoreError) as exc:  # StoreError: the lock is held elsewhere, or cannot be taken
        raise RestoreFailed(str(exc)) from None


# ----------------------------------------------------------------------------- importing
class Importer:
    """Imports transcripts into the session at ``directory`` with ``llm``, and keeps the run's figures."""

    @classmethod
    def with_settings_model(cls, directory: Path, settings: Settings, options: ImportOptions) -> Importer:
        """An importer that uses the model the settings name (they must name one)."""
        from ccm_tui.core.models.client_setup import model_client

        llm = model_client(settings)
        if llm is None:
            raise RestoreFailed("no model is configured")
        return cls(directory, settings, options, llm)

    def __init__(self, directory: Path, settings: Settings, options: ImportOptions, llm: ChatModel) -> None:
        self.directory = Path(directory)
        self.settings = settings
        self.options = options
        self.counter = TokenCounter(llm.model)
        self.meter = ModelCallMeter(llm, self.counter)
        self.started = time.monotonic()
        self.turns_imported = 0
        self.run_approved = False  # a bulk run over the budget was approved as a whole: no file asks again

    # ------------------------------------------------------------------------- the run's figures
    @property
    def calls(self) -> int:
        """Model calls made so far."""
        return self.meter.calls

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def cost(self) -> RestoreCost:
        """What the run cost so far, per turn imported."""
        return RestoreCost(self.meter.calls, self.meter.tokens_sent, self.turns_imported, self.elapsed())

    def plan(self, parsed: ParsedTranscript) -> CallPlan:
        """The model calls importing ``parsed`` will make (see :mod:`.call_plan`)."""
        rounds = 0 if self.options.skip_evidence else self.options.max_searches
        return plan_calls(parsed.turns, evidence_rounds=rounds, budget=self.options.max_calls)

    # ------------------------------------------------------------------------- several files
    def run_plan(self, paths: Sequence[Path]) -> RunPlan:
        """The calls importing every file of ``paths`` will make in all (parsed, no model): the files
        that are no transcripts, have no turns or were imported before count for nothing."""
        per_file: list[tuple[Path, int, int]] = []
        for path in paths:
            try:
                parsed = parse_file(path, self.options)
                if not parsed.turns or self.earlier_import(path, parsed)[1] is not None:
                    continue
            except Exception:  # noqa: BLE001 - it fails again, and is said, when its turn comes
                continue
            plan = self.plan(parsed)
            per_file.append((path, plan.calls, plan.tokens))
        return RunPlan(tuple(per_file), self.options.max_calls)

    def import_many(self, paths: Sequence[Path], progress: BulkProgress) -> list[ImportRow]:
        """Import each file as its own effort; see the module's policy. One row per file, in order.

        Before the first call the run's estimate is said (``progress.run_estimate``); a run over the
        budget goes ahead whole when ``progress.approve_run`` says so (then no file asks again), else
        only the files that fit the budget in order are imported and each other row says why."""
        rows: list[ImportRow] = []
        total = len(paths)
        left_out: dict[Path, str] = {}
        if len(paths) > 1:
            run = self.run_plan(paths)
            estimate = getattr(progress, "run_estimate", None)  # (a progress written before runs had one)
            if run.calls and estimate is not None:
                estimate(run)
            if run.over_budget:
                if getattr(progress, "approve_run", lambda _plan: False)(run):
                    self.run_approved = True
                else:
                    left_out = run.left_out()
        for index, path in enumerate(paths, start=1):
            if path in left_out:
                row = ImportRow(path, ImportStatus.FAILED, error=left_out[path])
                rows.append(row)
                progress.file_done(index, total, row)
                continue
            result = self.import_one(path, progress.start_file(index, total, path))
            rows.append(result.row)
            progress.file_done(index, total, result.row)
            if result.stops_the_run:  # a bad key or an unknown model: every other file would fail too
                rows.extend(ImportRow(later, ImportStatus.NOT_TRIED) for later in paths[index:])
                break
        return rows

    def import_one(self, path: Path, progress: ImportProgress) -> ImportResult:
        """Import one file; whatever goes wrong is its result's status (FAILED), never an exception."""
        row = ImportRow(path, ImportStatus.FAILED)
        warnings: list[str] = []
        try:
            parsed = parse_file(path, self.options)
            row.format, row.turns, warnings = parsed.format, len(parsed.turns), list(parsed.warnings)
            return self.import_parsed(path, parsed, progress)
        except NotATranscript:  # an agent's directory holds other files too (settings, todos, diffs)
            row.status = ImportStatus.SKIPPED_NOT_A_TRANSCRIPT
            return ImportResult(row)
        except RestoreFailed as exc:
            row.error = str(exc)
            return ImportResult(row, stops_the_run=isinstance(exc, ProviderRefused), warnings=warnings)
        except Exception as exc:  # noqa: BLE001 - one bad file never stops the others
            row.error = f"{type(exc).__name__}: {exc}"
            return ImportResult(row, warnings=warnings)

    # ------------------------------------------------------------------------- one parsed transcript
    def import_parsed(self, path: Path, parsed: ParsedTranscript, progress: ImportProgress) -> ImportResult:
        """Summarize ``parsed`` (read from ``path``) with the model and land it as a concluded effort.

        Returns the result (IMPORTED, or SKIPPED_NO_TURNS / SKIPPED_ALREADY with no model work) with
        the parse's sanity warnings, each also told to ``progress`` first; raises :class:`RestoreFailed`
        (nothing imported), :class:`ProviderRefused` among them."""
        for warning in parsed.warnings:
            progress.message(f"warning: {path.name}: {warning}")
        result = self._import_parsed(path, parsed, progress)
        result.warnings = list(parsed.warnings)
        return result

    def _import_parsed(self, path: Path, parsed: ParsedTranscript, progress: ImportProgress) -> ImportResult:
        row = ImportRow(path, ImportStatus.IMPORTED, parsed.format, len(parsed.turns))
        if not parsed.turns:
            row.status = ImportStatus.SKIPPED_NO_TURNS
            return ImportResult(row)
        digest, earlier = self.earlier_import(path, parsed)
        if earlier is not None:
            return _already(row, earlier)
        try:
            landed, outcome = self._summarize_and_land(path, parsed, digest, progress)
        except AlreadyImported as exc:  # the same transcript landed meanwhile
            return _already(row, exc.effort_id)
        row.effort_id = landed.effort_id
        row.not_summarized = len(outcome.turns.state.skipped_turns)
        self.turns_imported += landed.turns
        return ImportResult(row, landed, outcome)

    def earlier_import(self, path: Path, parsed: ParsedTranscript) -> tuple[str, str | None]:
        """The transcript's digest (of the bytes that were parsed, so a file still growing is never
        marked imported beyond what was read) and the effort it was imported as before with the
        same ``max_turns`` (None when there is none, or with ``force``)."""
        try:
            digest = parsed.sha256 or landing.transcript_digest(path)
            earlier = landing.already_imported(self.directory, digest, self.options.max_turns)
        except OSError as exc:
            raise RestoreFailed(f"cannot read transcript {path}: {exc.strerror or exc}") from None
        except ManifestError as exc:
            raise RestoreFailed(str(exc)) from None
        return digest, None if self.options.force else earlier

    def _summarize_and_land(
        self, path: Path, parsed: ParsedTranscript, digest: str, progress: ImportProgress
    ) -> tuple[Landed, RestoreOutcome]:
        outcome = self._summarize(path, parsed, progress)
        return self._land(path, parsed, digest, outcome), outcome

    def summarize(self, path: Path, parsed: ParsedTranscript, progress: ImportProgress) -> RestoreOutcome:
        """The model work alone, nothing landed (a captured session's summary, :mod:`.capture_summaries`).

        Raises:
            RestoreFailed: the plan is over the budget and not approved, or the model work failed.
        """
        return self._summarize(path, parsed, progress)

    def _summarize(self, path: Path, parsed: ParsedTranscript, progress: ImportProgress) -> RestoreOutcome:
        """The model work: turn summaries, evidence search, session summary."""
        from ccm_tui.core.text.terminal import captured_text
        from ccm_tui.restore.file_access import choose_root
        from ccm_tui.restore.parse import read_transcript_text
        from ccm_tui.restore.pipeline import restore_pipeline
        from ccm_tui.restore.summarizer import RestoreAborted

        options = self.options
        root, reason = None, "no file access (evidence search skipped)"
        if not options.skip_evidence:
            try:
                root, reason = choose_root(options.root, parsed.cwd)
            except ValueError as exc:
                raise RestoreFailed(str(exc)) from None
        plan = self.plan(parsed)
        name = landing.effort_name(parsed, path)
        if not options.skip_evidence:
            progress.message(f"evidence search: {reason}")
        progress.message(f"estimate: {plan.describe()}")
        if plan.over_budget and not self.run_approved and not progress.approve(plan):
            raise RestoreFailed(plan.refusal(path.name))
        log_text = captured_text(read_transcript_text(path)[0]) if not options.skip_evidence else ""
        self.meter.start_file(plan.ceiling)
        try:
            return run_to_the_end(
                restore_pipeline(
                    self.meter,
                    parsed,
                    log_text,
                    self.counter,
                    name=name,
                    root=root,
                    root_reason=reason,
                    skip_evidence=options.skip_evidence,
                    max_searches=options.max_searches,
                    progress=progress,
                    retries=min(self.settings.max_retries, MAX_SUMMARY_RETRIES),
                    retry_base=options.retry_base,
                    on_turns_done=progress.turns_summarized,
                    batches=plan.batches,
                )
            )
        except RestoreAborted as exc:
            error = ProviderRefused if exc.provider_refuses else RestoreFailed
            raise error(f"restore stopped, nothing was imported: {exc}") from None
        finally:
            self.meter.start_file(None)
            progress.clear()

    def _land(self, path: Path, parsed: ParsedTranscript, digest: str, outcome: RestoreOutcome) -> Landed:
        from ccm_tui.restore.pipeline import source_extras

        extra = source_extras(self.settings, outcome, self.options.max_turns)
        try:
            return landing.land(
                self.directory,
                parsed,
                path,
                outcome.session.summary,
                self.settings,
                report=outcome.session.report,
                extra_source=extra,
                digest=digest,
                force=self.options.force,
            )
        except StoreError as exc:
            raise RestoreFailed(f"could not write the restored effort: {exc}") from None


T = TypeVar("T")


def run_to_the_end(work: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(work)``, whose Ctrl+C ends in one line.

    litellm hands each request to a worker thread; a request cancelled by the interrupt leaves
    there a coroutine that is never awaited, and Python reports it on stderr (a RuntimeWarning
    and its source line) when the thread lets go of it — after the interrupt, before the
    command's own "interrupted". That report is silenced from the moment of the interrupt (the
    process is ending), never before."""
    with asyncio.Runner() as runner:
        return runner.run(_quiet_after_interrupt(work))


async def _quiet_after_interrupt(work: Coroutine[Any, Any, T]) -> T:
    previous = signal.getsignal(signal.SIGINT)
    if threading.current_thread() is not threading.main_thread() or not callable(previous):
        return await work

    def on_interrupt(signum: int, frame: Any) -> None:
        warnings.filterwarnings("ignore", message=r"coroutine .* was never awaited", category=RuntimeWarning)
        previous(signum, frame)

    signal.signal(signal.SIGINT, on_interrupt)
    try:
        return await work
    finally:
        if signal.getsignal(signal.SIGINT) is on_interrupt:
            signal.signal(signal.SIGINT, previous)


def _already(row: ImportRow, effort_id: str) -> ImportResult:
    row.status, row.effort_id = ImportStatus.SKIPPED_ALREADY, effort_id
    return ImportResult(row)
