"""``ccm-tui restore TRANSCRIPT|DIR|GLOB...``: parse → turn summaries → evidence search → SESSION SUMMARY → effort.

``--parse-only [--json]`` needs no model: it prints the turns the parser
found. Otherwise the restore pipeline (:mod:`ccm_tui.restore.pipeline`) runs
against the configured model and the result lands as a concluded effort in the
chosen session. Progress goes to stderr: one updating line on a terminal,
plain lines otherwise.

Several transcripts (directories are searched, globs expanded) are imported one
by one, each as its own effort; a failing file does not stop the others, and a
table ends the run. A transcript already imported (same bytes) is reported and
skipped unless ``--force``.
"""

from __future__ import annotations

import argparse
import asyncio
import glob
import shlex
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from ..config import retry_base_seconds
from ..restore.turns import ParsedTranscript, TranscriptError, UnknownTranscriptFormat, to_parse_only_json
from .common import (
    EXIT_OK,
    EXIT_RUNTIME,
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

BAR_WIDTH = 24


def add_parser(sub: Any) -> None:
    from ..restore.parse import FORMATS

    p = sub.add_parser("restore", help="import a coding-agent transcript as a concluded effort")
    session_options(p)
    model_options(p)
    debug_option(p)
    p.add_argument("transcripts", nargs="+", metavar="TRANSCRIPT", help="a transcript file, a directory or a glob")
    p.add_argument("--force", action="store_true", help="import a copy even if the transcript was imported before")
    p.add_argument("--format", default="auto", help="auto|" + "|".join(sorted(FORMATS)))
    p.add_argument("--root", type=Path, help="directory the evidence search may read files under")
    p.add_argument("--max-turns", type=int, metavar="N")
    p.add_argument("--skip-evidence-search", action="store_true")
    p.add_argument("--max-searches", type=int, default=8, metavar="N")
    p.add_argument("--dump-turns", action="store_true", help="print the turn-by-turn summaries")
    p.add_argument("--parse-only", action="store_true", help="parse and list turns; no model")
    p.add_argument("--json", action="store_true", help="with --parse-only: print JSON")


# ----------------------------------------------------------------------------- progress
class ProgressLine:
    """Progress on stderr: one line redrawn in place on a terminal, plain lines otherwise."""

    def __init__(self, stream: TextIO | None = None, *, tty: bool | None = None) -> None:
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty() if tty is None else tty
        self._drawn = False
        self._last_label = ""

    def __call__(self, done: int, total: int, label: str) -> None:
        if self.tty:
            filled = BAR_WIDTH * done // total if total else BAR_WIDTH
            bar = "█" * filled + "░" * (BAR_WIDTH - filled)
            self.stream.write(f"\r\x1b[K{bar} {done}/{total} {label}"[:200])
            self._drawn = True
        elif label != self._last_label:
            self.stream.write(f"restore: {label} ({done}/{total})\n")
        self._last_label = label
        self.stream.flush()

    def message(self, text: str) -> None:
        """A line that stays (phase changes, notes)."""
        self.clear()
        self.stream.write(f"restore: {text}\n")
        self.stream.flush()

    def clear(self) -> None:
        if self._drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._drawn = False


def run(args: argparse.Namespace) -> int:
    _check_flags(args)
    if len(args.transcripts) == 1 and not _is_pattern_or_dir(args.transcripts[0]):
        return _run_single(args, Path(args.transcripts[0]).expanduser())
    return _run_bulk(args, expand_transcripts(args.transcripts))


def _run_single(args: argparse.Namespace, transcript: Path) -> int:
    if not transcript.is_file():
        raise CliError(f"no transcript file at {transcript}")
    parsed = _parse(transcript, args)
    if args.parse_only:
        if args.json:
            print_json(to_parse_only_json(parsed))
        else:
            print(render_parse_table(parsed))
        return EXIT_OK
    if not parsed.turns:
        raise CliError(f"no human turns found in {transcript.name} (format {parsed.format}); nothing to restore")
    return _restore(args, transcript, parsed)


# ----------------------------------------------------------------------------- finding transcripts
TRANSCRIPT_SUFFIXES = frozenset({".jsonl", ".json", ".md", ".markdown", ".log", ".txt"})


def _is_pattern_or_dir(argument: str) -> bool:
    path = Path(argument).expanduser()
    return path.is_dir() or (not path.exists() and glob.has_magic(argument))


def expand_transcripts(arguments: list[str]) -> list[Path]:
    """The files named by the arguments: files as given, directories searched (hidden ones
    left out), globs expanded; in order, each file once. A name matching nothing is an error."""
    found: list[Path] = []
    for argument in arguments:
        path = Path(argument).expanduser()
        if path.is_dir():
            matches = _files_under(path)
        elif path.exists() or not glob.has_magic(argument):
            matches = [path]
        else:
            matches = []
            for name in sorted(glob.glob(str(path), recursive=True)):
                candidate = Path(name)
                matches.extend(_files_under(candidate) if candidate.is_dir() else [candidate])
        if not matches:
            raise CliError(f"no transcript found at {argument}")
        found.extend(matches)
    return list(dict.fromkeys(found))


def _storage_detail(path: Path) -> bool:
    """A file of opencode's storage that is not a session: its messages and parts (read with their
    session file), and its project, diff and todo records."""
    parts = path.parts
    return any(
        parts[i] == "storage" and parts[i + 1] in ("message", "part", "project", "session_diff", "todo")
        for i in range(len(parts) - 1)
    )


def _files_under(directory: Path) -> list[Path]:
    files = []
    for path in sorted(directory.rglob("*")):
        relative = path.relative_to(directory).parts
        if any(part.startswith(".") for part in relative[:-1]) or path.is_symlink() or _storage_detail(path):
            continue
        if path.is_file() and path.suffix.lower() in TRANSCRIPT_SUFFIXES:
            files.append(path)
    return files


class ProviderRefused(CliError):
    """The provider refuses every request (bad key, unknown model): a bulk import stops there."""


def _check_flags(args: argparse.Namespace) -> None:
    from ..restore.parse import FORMATS

    fmt = getattr(args, "format", "auto") or "auto"
    if fmt != "auto" and fmt not in FORMATS:
        raise UsageError(f"unknown --format {fmt!r}; use auto or one of {', '.join(sorted(FORMATS))}")
    if args.max_turns is not None and args.max_turns < 1:
        raise UsageError("--max-turns must be at least 1")
    if args.max_searches is not None and args.max_searches < 0:
        raise UsageError("--max-searches must be 0 or more")
    if args.parse_only and args.dump_turns:
        raise UsageError("--dump-turns needs the model; it cannot be combined with --parse-only")
    if args.parse_only and args.force:
        raise UsageError("--force imports; it cannot be combined with --parse-only")


class NotATranscript(CliError):
    """No known format recognises the file (in a directory scan: a settings file, a todo list …)."""


def _parse(transcript: Path, args: argparse.Namespace) -> ParsedTranscript:
    from ..restore.parse import parse_transcript

    try:
        return parse_transcript(transcript, fmt=args.format or "auto", max_turns=args.max_turns)
    except UnknownTranscriptFormat as exc:
        raise NotATranscript(str(exc)) from None
    except TranscriptError as exc:
        raise CliError(str(exc)) from None


def render_parse_table(parsed: ParsedTranscript) -> str:
    """A readable listing of the parsed turns (``--parse-only`` without ``--json``)."""
    artifacts = sum(len(t.artifacts) for t in parsed.turns)
    head = f"format {parsed.format} · {len(parsed.turns)} turn(s) · {artifacts} artifact(s)"
    lines = [head]
    if parsed.title:
        lines.append(f"title {parsed.title}")
    if parsed.cwd:
        lines.append(f"cwd {parsed.cwd}")
    lines.append(f"{'turn':>4}  {'lines':<13} request")
    for turn in parsed.turns:
        request = " ".join(turn.user.split())
        request = request[:90] + ("…" if len(request) > 90 else "")
        lines.append(f"{turn.turn:>4}  {f'{turn.start_line}-{turn.end_line}':<13} {request}")
        for artifact in turn.artifacts:
            lines.append(f"{'':>4}  {'':<13}   {artifact.action:<7} {artifact.path}")
    if parsed.skipped:
        lines.append(f"skipped: {len(parsed.skipped)} item(s), e.g. {parsed.skipped[0]}")
    return "\n".join(lines)


@dataclass
class _Importer:
    """What every import of one run shares: the session, the settings, the metered model client."""

    args: argparse.Namespace
    directory: Path
    settings: Any
    counter: Any
    meter: Any
    started: float = field(default_factory=time.monotonic)


def _importer(args: argparse.Namespace) -> _Importer:
    from ..config import ConfigError
    from ..core.reading import ManifestError
    from ..restore import landing
    from ..restore.pipeline import metered_model

    directory = session_dir_from(args)
    try:
        landing.check_session_dir(directory)
        settings = load_settings_from(args)
    except (ManifestError, ConfigError) as exc:
        raise CliError(str(exc)) from None
    require_model(settings, " (or use --parse-only, which needs no model)")
    meter = metered_model(settings)
    return _Importer(args, directory, settings, meter.counter, meter)


def _earlier_import(importer: _Importer, transcript: Path, parsed: ParsedTranscript) -> tuple[str, str | None]:
    """The transcript's digest (of the bytes that were parsed, so a file still growing is never
    marked imported beyond what was read) and the effort it was imported as before (None with --force)."""
    from ..core.reading import ManifestError
    from ..restore import landing

    try:
        digest = parsed.sha256 or landing.transcript_digest(transcript)
        earlier = landing.already_imported(importer.directory, digest, importer.args.max_turns)
    except OSError as exc:
        raise CliError(f"cannot read transcript {transcript}: {exc.strerror or exc}") from None
    except ManifestError as exc:
        raise CliError(str(exc)) from None
    return digest, None if importer.args.force else earlier


def _import_one(importer: _Importer, transcript: Path, parsed: ParsedTranscript, digest: str, progress) -> tuple:
    """Run the model pipeline for one transcript and land it; returns (landed, outcome).

    Raises :class:`CliError` (nothing imported) or ``landing.AlreadyImported``."""
    from ..core.reading import StoreError
    from ..restore import landing
    from ..restore.ansi import strip_ansi
    from ..restore.evidence import choose_root
    from ..restore.parse import read_transcript_text
    from ..restore.pipeline import MAX_SUMMARY_RETRIES, restore_pipeline, source_extras
    from ..restore.summarizer import RestoreAborted

    args, settings = importer.args, importer.settings
    skip_evidence = args.skip_evidence_search or args.max_searches == 0
    root, reason = None, "no file access (evidence search skipped)"
    if not skip_evidence:
        try:
            root, reason = choose_root(args.root, parsed.cwd)
        except ValueError as exc:
            raise CliError(str(exc)) from None
    name = landing.effort_name(parsed, transcript)
    log_text = strip_ansi(read_transcript_text(transcript)[0]) if not skip_evidence else ""
    if not skip_evidence:
        progress.message(f"evidence search: {reason}")

    def after_turns(turns) -> None:
        progress.clear()
        _dump_turns(turns)

    try:
        outcome = asyncio.run(
            restore_pipeline(
                importer.meter,
                parsed,
                log_text,
                importer.counter,
                name=name,
                root=root,
                root_reason=reason,
                skip_evidence=skip_evidence,
                max_searches=args.max_searches,
                progress=progress,
                retries=min(settings.max_retries, MAX_SUMMARY_RETRIES),
                retry_base=retry_base_seconds(),
                on_turns_done=after_turns if args.dump_turns and not args.json else None,
            )
        )
    except RestoreAborted as exc:
        error = ProviderRefused if exc.provider_refuses else CliError
        raise error(f"restore stopped, nothing was imported: {exc}") from None
    finally:
        progress.clear()
    extra = source_extras(settings, outcome, args.max_turns)
    try:
        landed = landing.land(
            importer.directory,
            parsed,
            transcript,
            outcome.session.summary,
            settings,
            report=outcome.session.report,
            extra_source=extra,
            digest=digest,
            force=args.force,
        )
    except StoreError as exc:
        raise CliError(f"could not write the restored effort: {exc}") from None
    return landed, outcome


def _restore(args: argparse.Namespace, transcript: Path, parsed: ParsedTranscript) -> int:
    """Run the model pipeline for one transcript and land the result."""
    from ..restore.landing import AlreadyImported

    importer = _importer(args)
    digest, earlier = _earlier_import(importer, transcript, parsed)
    if earlier is not None:
        return _report_already_imported(args, transcript, earlier)
    try:
        landed, outcome = _import_one(importer, transcript, parsed, digest, ProgressLine())
    except AlreadyImported as exc:
        return _report_already_imported(args, transcript, exc.effort_id)
    for note in outcome.notes:
        sys.stderr.write(f"restore: note: {note}\n")
    cost = RestoreCost(
        importer.meter.calls, importer.meter.tokens_sent, landed.turns, time.monotonic() - importer.started
    )
    if args.json:
        print_json({**_result_json(landed, outcome, args.dump_turns), "cost": cost.to_dict()})
    else:
        print(render_result(landed, outcome, _session_flag(args)))
        print(cost.render())
    return 0


def _report_already_imported(args: argparse.Namespace, transcript: Path, effort_id: str) -> int:
    if args.json:
        print_json({"effort_id": effort_id, "status": "already imported", "file": str(transcript)})
    else:
        print(f"{transcript} is already imported as {effort_id} (--force imports a copy)")
    return EXIT_OK


@dataclass
class RestoreCost:
    """What an import cost: model calls, tokens sent, wall time — in total and per turn."""

    calls: int
    tokens_sent: int
    turns: int
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        per_turn = max(self.turns, 1)
        return {
            "model_calls": self.calls,
            "tokens_sent": self.tokens_sent,
            "seconds": round(self.seconds, 1),
            "turns": self.turns,
            "calls_per_turn": round(self.calls / per_turn, 2),
            "tokens_sent_per_turn": round(self.tokens_sent / per_turn),
        }

    def render(self) -> str:
        data = self.to_dict()
        return (
            f"Cost: {self.calls} model call(s), {self.tokens_sent:,} tokens sent, {data['seconds']} s "
            f"for {self.turns} turn(s) — per turn {data['calls_per_turn']} call(s), "
            f"{data['tokens_sent_per_turn']:,} tokens sent"
        )


# ----------------------------------------------------------------------------- several transcripts
@dataclass
class ImportRow:
    """One line of the table that ends a bulk import."""

    file: Path
    format: str = "-"
    turns: int | None = None
    effort_id: str = "-"
    status: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "file": str(self.file),
            "format": self.format,
            "turns": self.turns,
            "effort_id": None if self.effort_id == "-" else self.effort_id,
            "status": self.status,
        }


def _run_bulk(args: argparse.Namespace, transcripts: list[Path]) -> int:
    if args.parse_only:
        return _parse_only_bulk(args, transcripts)
    importer = _importer(args)
    progress = ProgressLine()
    rows: list[ImportRow] = []
    turns_done = 0
    for index, transcript in enumerate(transcripts, start=1):
        row = ImportRow(transcript)
        rows.append(row)

        step = _BulkProgress(progress, importer, f"[{index}/{len(transcripts)}] {transcript.name}", index - 1)
        step.turns_done = turns_done
        try:
            _bulk_import_one(importer, transcript, row, step)
        except ProviderRefused as exc:  # a bad key or an unknown model: every other file would fail too
            row.status = f"failed: {exc}"
            for later in transcripts[index:]:
                rows.append(
                    ImportRow(later, status="not tried: the provider refuses this key or model (see the failed file)")
                )
            progress.clear()
            progress.message(f"[{index}/{len(transcripts)}] {transcript.name}: {row.status}")
            break
        except CliError as exc:
            row.status = f"failed: {exc}"
        except Exception as exc:  # noqa: BLE001 - one bad file never stops the others
            row.status = f"failed: {type(exc).__name__}: {exc}"
        progress.clear()
        if row.status.startswith("imported"):
            turns_done += row.turns or 0
        progress.message(f"[{index}/{len(transcripts)}] {transcript.name}: {row.status}")
    cost = RestoreCost(
        importer.meter.calls, importer.meter.tokens_sent, turns_done, time.monotonic() - importer.started
    )
    if args.json:
        print_json({"imports": [row.to_dict() for row in rows], "cost": cost.to_dict()})
    else:
        print(render_import_table(rows))
        print(cost.render())
    return EXIT_RUNTIME if any(row.status.startswith("failed") for row in rows) else EXIT_OK


class _BulkProgress:
    """The progress line of one transcript of a bulk import, with the run's totals."""

    def __init__(self, line: ProgressLine, importer: _Importer, prefix: str, sessions_done: int) -> None:
        self.line, self.importer, self.prefix, self.sessions_done = line, importer, prefix, sessions_done
        self.turns_done = 0

    def __call__(self, done: int, total: int, label: str) -> None:
        elapsed = time.monotonic() - self.importer.started
        self.line(
            done,
            total,
            f"{self.prefix}: {label} · {self.sessions_done} session(s), {self.turns_done} turn(s) done · "
            f"{elapsed:.0f} s · {self.importer.meter.calls} model call(s)",
        )

    def message(self, text: str) -> None:
        self.line.message(f"{self.prefix}: {text}")

    def clear(self) -> None:
        self.line.clear()


def _bulk_import_one(importer: _Importer, transcript: Path, row: ImportRow, progress) -> None:
    from ..restore.landing import AlreadyImported

    if not transcript.is_file():
        raise CliError(f"no transcript file at {transcript}")
    try:
        parsed = _parse(transcript, importer.args)
    except NotATranscript:  # an agent's directory holds other files too (settings, todos, diffs)
        row.status = "skipped: not a transcript (no known format)"
        return
    row.format, row.turns = parsed.format, len(parsed.turns)
    if not parsed.turns:
        row.status = "skipped: no human turns"
        return
    digest, earlier = _earlier_import(importer, transcript, parsed)
    if earlier is not None:
        row.effort_id, row.status = earlier, f"skipped: already imported as {earlier}"
        return
    try:
        landed, outcome = _import_one(importer, transcript, parsed, digest, progress)
    except AlreadyImported as exc:
        row.effort_id, row.status = exc.effort_id, f"skipped: already imported as {exc.effort_id}"
        return
    row.effort_id = landed.effort_id
    skipped = len(outcome.turns.state.skipped_turns)
    row.status = "imported" + (f" ({skipped} turn(s) not summarized)" if skipped else "")


def render_import_table(rows: list[ImportRow]) -> str:
    """The table that ends a bulk import: file, format, turns, effort id, status."""
    headers = ("file", "format", "turns", "effort id", "status")
    cells = [(str(r.file), r.format, "-" if r.turns is None else str(r.turns), r.effort_id, r.status) for r in rows]
    widths = [min(60, max(len(h), *(len(c[i]) for c in cells))) for i, h in enumerate(headers[:-1])]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=False)) + "  status"]
    for cell in cells:
        shown = [c if len(c) <= w else "…" + c[-(w - 1) :] for c, w in zip(cell, widths, strict=False)]
        lines.append("  ".join(c.ljust(w) for c, w in zip(shown, widths, strict=False)) + "  " + cell[-1])
    kinds = ("imported", "skipped", "failed", "not tried")
    counts = {kind: sum(r.status.startswith(kind) for r in rows) for kind in kinds}
    shown = [f"{n} {kind}" for kind, n in counts.items() if n or kind != "not tried"]
    lines.append(", ".join(shown) + f" of {len(rows)} file(s)")
    return "\n".join(lines)


def _parse_only_bulk(args: argparse.Namespace, transcripts: list[Path]) -> int:
    """``--parse-only`` over several files: ``{"files": [<single-file document + "file"> | {"file", "error"}]}``."""
    documents: list[dict[str, Any]] = []
    blocks: list[str] = []
    for transcript in transcripts:
        try:
            if not transcript.is_file():
                raise CliError(f"no transcript file at {transcript}")
            parsed = _parse(transcript, args)
        except CliError as exc:
            documents.append({"file": str(transcript), "error": str(exc)})
            blocks.append(f"== {transcript}\nerror: {exc}")
            continue
        documents.append({"file": str(transcript), **to_parse_only_json(parsed)})
        blocks.append(f"== {transcript}\n{render_parse_table(parsed)}")
    if args.json:
        print_json({"files": documents})
    else:
        print("\n\n".join(blocks))
    return EXIT_RUNTIME if any("error" in d for d in documents) else EXIT_OK


def _dump_turns(turns) -> None:
    """``--dump-turns``: print every turn summary (skipped turns say so)."""
    by_turn = {s.turn: s for s in turns.summaries}
    for turn in sorted(set(by_turn) | set(turns.state.skipped_turns)):
        summary = by_turn.get(turn)
        print(
            summary.render() if summary else f"TURN SUMMARY\n\nTurn number: {turn}\n(skipped: could not be summarized)"
        )
        print()
    sys.stdout.flush()


def _session_flag(args: argparse.Namespace) -> str:
    if getattr(args, "session_dir", None):
        return f" --session-dir {shlex.quote(str(args.session_dir))}"
    if getattr(args, "session", None):
        return f" --session {shlex.quote(args.session)}"
    return ""


def render_result(landed: Any, outcome: Any, session_flag: str = "") -> str:
    """What a person sees at the end: the effort id, turns, summary and how to look at it."""
    skipped = outcome.turns.state.skipped_turns
    facts = [
        f"format {landed.source['format']}",
        f"{landed.turns} turn(s)" + (f" ({len(skipped)} could not be summarized)" if skipped else ""),
        f"{landed.source['artifacts']} file action(s)",
    ]
    if outcome.evidence is not None:
        facts.append(f"evidence: {outcome.evidence.rounds} round(s), {outcome.evidence.ended_by.replace('_', ' ')}")
    return "\n".join(
        [
            f"Restored {landed.source['file']}",
            f"  → concluded effort '{landed.effort_id}' in {landed.session_dir}",
            "  " + " · ".join(facts),
            "",
            f"Summary: {landed.summary}",
            "",
            f"See it: ccm-tui status{session_flag}    Find it: ccm-tui search{session_flag} {shlex.quote(landed.effort_id)}",
            "In the TUI it is listed under Concluded: select it to expand its raw turns or reopen it.",
        ]
    )


def _result_json(landed: Any, outcome: Any, with_turns: bool) -> dict[str, Any]:
    data: dict[str, Any] = {
        "effort_id": landed.effort_id,
        "session_dir": str(landed.session_dir),
        "turns": landed.turns,
        "summary": landed.summary,
        "report": outcome.session.report,
        "source": {k: v for k, v in landed.source.items() if k != "report"},
        "notes": outcome.notes,
    }
    if with_turns:
        data["turn_summaries"] = [s.to_dict() for s in outcome.turns.summaries]
    return data
