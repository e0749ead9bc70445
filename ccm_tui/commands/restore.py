"""``ccm-tui restore TRANSCRIPT|DIR|GLOB...``: parse → turn summaries → evidence search → SESSION SUMMARY → effort.

``--parse-only [--json]`` needs no model: it prints the turns the parser
found. Otherwise the import (:mod:`ccm_tui.restore.importer`) runs against the
configured model and the result lands as a concluded effort in the chosen
session. Progress goes to stderr: one updating line on a terminal, plain lines
otherwise.

Several transcripts (directories are searched, globs expanded: see
:mod:`ccm_tui.restore.discovery`) are imported one by one, each as its own
effort; a failing file does not stop the others, and a table ends the run. A
transcript already imported (same bytes) is reported and skipped unless
``--force``. Before a file's first model call its estimate is said (calls, rough
tokens); a file that needs more calls than ``--max-calls`` asks first on a terminal,
goes ahead with ``--yes``, and is refused otherwise (see
:mod:`ccm_tui.restore.call_plan`). Several files: the run's estimate in all is said first, and
``--max-calls`` is the run's budget too: one question (or ``--yes``) for the run, never N times
the budget unasked. This module reads the flags, calls the library and prints.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from ..config import ConfigError, retry_base_seconds
from ..core.api import terminal_safe
from ..restore.discovery import NoTranscriptFound, expand_transcripts, single_transcript
from ..restore.results import ImportRow, ImportStatus, ParsedFile, RestoreFailed, any_failed, tally
from ..restore.turns import ParsedTranscript, to_parse_only_json
from .common import (
    EXIT_OK,
    EXIT_RUNTIME,
    CliError,
    UsageError,
    debug_option,
    load_settings_from,
    model_options,
    print_json,
    raw_stream,
    require_model,
    session_dir_from,
    session_options,
    whole_number,
)

MAX_TURNS = 10_000_000  # --max-turns: a transcript's turns are far fewer (a 64 MB file holds ~100,000)
MAX_SEARCHES = 1_000  # --max-searches: evidence searches per file
MAX_CALLS = 1_000_000  # --max-calls: model calls per file before asking

if TYPE_CHECKING:
    from ..restore.call_plan import CallPlan, RunPlan
    from ..restore.importer import Importer, ImportOptions
    from ..restore.landing import Landed
    from ..restore.pipeline import RestoreOutcome
    from ..restore.summarizer import TurnSummaries

BAR_WIDTH = 24


def add_parser(sub: Any) -> None:
    from ..restore.call_plan import DEFAULT_MAX_CALLS
    from ..restore.parse import FORMATS

    p = sub.add_parser("restore", help="import a coding-agent transcript as a concluded effort")
    session_options(p)
    model_options(p)
    debug_option(p)
    p.add_argument("transcripts", nargs="+", metavar="TRANSCRIPT", help="a transcript file, a directory or a glob")
    p.add_argument("--force", action="store_true", help="import a copy even if the transcript was imported before")
    p.add_argument("--format", default="auto", help="auto|" + "|".join(sorted(FORMATS)))
    p.add_argument("--root", type=Path, help="directory the evidence search may read files under")
    p.add_argument(
        "--max-turns", type=whole_number(1, MAX_TURNS), metavar="N", help="import only the first N turns of each file"
    )
    p.add_argument("--skip-evidence-search", action="store_true")
    p.add_argument(
        "--max-searches",
        type=whole_number(0, MAX_SEARCHES),
        default=8,
        metavar="N",
        help="evidence searches per file (default 8; 0: none)",
    )
    p.add_argument(
        "--max-calls",
        type=whole_number(1, MAX_CALLS),
        default=DEFAULT_MAX_CALLS,
        metavar="N",
        help=f"model calls per file, and per run of several files, before asking (default {DEFAULT_MAX_CALLS}; "
        "past it, small turns share calls)",
    )
    p.add_argument(
        "-y", "--yes", action="store_true", help="make a file's (or a run's) calls past --max-calls without asking"
    )
    p.add_argument("--dump-turns", action="store_true", help="print the turn-by-turn summaries")
    p.add_argument("--parse-only", action="store_true", help="parse and list turns; no model")
    p.add_argument("--json", action="store_true", help="with --parse-only: print JSON")


# ----------------------------------------------------------------------------- progress
class ProgressLine:
    """Progress on stderr: one line redrawn in place on a terminal, plain lines otherwise.

    With ``dump_turns`` the turn summaries are printed (stdout) once every turn is summarized."""

    def __init__(
        self,
        stream: TextIO | None = None,
        *,
        tty: bool | None = None,
        dump_turns: bool = False,
        yes: bool = False,
        answers: TextIO | None = None,
        name: str = "",
    ) -> None:
        self.stream = raw_stream(stream or sys.stderr)  # a bar redrawn in place: the label is cleaned here
        self.tty = self.stream.isatty() if tty is None else tty
        self.dump_turns = dump_turns
        self.yes = yes
        self.answers = answers  # where a person answers (None: stdin, when it is a terminal)
        self.name = name  # the transcript, named when asking
        self._drawn = False
        self._last_label = ""

    def __call__(self, done: int, total: int, label: str) -> None:
        if self.tty:
            filled = BAR_WIDTH * done // total if total else BAR_WIDTH
            bar = "█" * filled + "░" * (BAR_WIDTH - filled)
            self.stream.write(f"\r\x1b[K{bar} {done}/{total} {terminal_safe(' '.join(label.split()))}"[:200])
            self._drawn = True
        elif label != self._last_label:
            self.stream.write(terminal_safe(f"restore: {label} ({done}/{total})") + "\n")
        self._last_label = label
        self.stream.flush()

    def message(self, text: str) -> None:
        """A line that stays (phase changes, notes)."""
        self.clear()
        self.stream.write(terminal_safe(f"restore: {text}") + "\n")
        self.stream.flush()

    def clear(self) -> None:
        if self._drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._drawn = False

    def turns_summarized(self, turns: TurnSummaries) -> None:
        if self.dump_turns:
            self.clear()
            _dump_turns(turns)

    def approve(self, plan: CallPlan | RunPlan, name: str = "") -> bool:
        """``--yes``, or the answer of a person at the terminal; without one: no (the file is refused)."""
        if self.yes:
            return True
        answers = self.answers or (sys.stdin if sys.stdin.isatty() else None)
        if answers is None:
            return False
        self.clear()
        what = f"{name or self.name or 'this transcript'} needs"
        self.stream.write(
            terminal_safe(
                f"restore: {what} up to {plan.calls:,} model calls (~{plan.tokens:,} tokens sent), more than "
                f"--max-calls {plan.budget:,}. Go ahead? [y/N] "
            )
        )
        self.stream.flush()
        try:
            answer = answers.readline()
        except KeyboardInterrupt:
            self.stream.write("\n")  # "interrupted" on a line of its own
            raise
        if not answer.endswith("\n"):
            self.stream.write("\n")
        return answer.strip().lower() in ("y", "yes")


class _BulkProgress:
    """The progress of a bulk import: one line per file with the run's totals, and its outcome."""

    def __init__(self, line: ProgressLine, importer: Importer) -> None:
        self.line, self.importer = line, importer

    def start_file(self, index: int, total: int, path: Path) -> _FileProgress:
        return _FileProgress(self.line, self.importer, f"[{index}/{total}] {path.name}", index - 1)

    def file_done(self, index: int, total: int, row: ImportRow) -> None:
        self.line.clear()
        self.line.message(f"[{index}/{total}] {row.file.name}: {row.status_text}")

    def run_estimate(self, plan: RunPlan) -> None:
        self.line.message(f"estimate for {plan.describe()}")

    def approve_run(self, plan: RunPlan) -> bool:
        return self.line.approve(plan, f"the run ({plan.files:,} files)")


class _FileProgress:
    """The progress line of one transcript of a bulk import, with the run's totals."""

    def __init__(self, line: ProgressLine, importer: Importer, prefix: str, sessions_done: int) -> None:
        self.line, self.importer, self.prefix, self.sessions_done = line, importer, prefix, sessions_done
        self.turns_done = importer.turns_imported

    def __call__(self, done: int, total: int, label: str) -> None:
        self.line(
            done,
            total,
            f"{self.prefix}: {label} · {self.sessions_done} session(s), {self.turns_done} turn(s) done · "
            f"{self.importer.elapsed():.0f} s · {self.importer.calls} model call(s)",
        )

    def message(self, text: str) -> None:
        self.line.message(f"{self.prefix}: {text}")

    def clear(self) -> None:
        self.line.clear()

    def turns_summarized(self, turns: TurnSummaries) -> None:
        self.line.turns_summarized(turns)

    def approve(self, plan: CallPlan) -> bool:
        return self.line.approve(plan, self.prefix)


# ----------------------------------------------------------------------------- running
def run(args: argparse.Namespace) -> int:
    _check_flags(args)
    options = _options(args)
    try:
        transcript = single_transcript(args.transcripts)
        if transcript is not None:
            return _run_single(args, options, transcript)
        return _run_bulk(args, options, expand_transcripts(args.transcripts))
    except (RestoreFailed, NoTranscriptFound) as exc:
        raise CliError(str(exc)) from None


def _check_flags(args: argparse.Namespace) -> None:
    from ..restore.parse import FORMATS

    fmt = getattr(args, "format", "auto") or "auto"
    if fmt != "auto" and fmt not in FORMATS:
        raise UsageError(f"unknown --format {fmt!r}; use auto or one of {', '.join(sorted(FORMATS))}")
    if args.parse_only and args.dump_turns:
        raise UsageError("--dump-turns needs the model; it cannot be combined with --parse-only")
    if args.parse_only and args.force:
        raise UsageError("--force imports; it cannot be combined with --parse-only")


def _options(args: argparse.Namespace) -> ImportOptions:
    from ..restore.importer import ImportOptions

    return ImportOptions(
        format=args.format or "auto",
        max_turns=args.max_turns,
        root=args.root,
        skip_evidence_search=args.skip_evidence_search,
        max_searches=args.max_searches,
        force=args.force,
        retry_base=retry_base_seconds(),
        max_calls=args.max_calls,
    )


def _importer(args: argparse.Namespace, options: ImportOptions) -> Importer:
    """The run's importer: the session (checked before any model work), the settings, the model."""
    from ..restore.importer import Importer, check_session

    directory = session_dir_from(args)
    check_session(directory)
    try:
        settings = load_settings_from(args)
    except ConfigError as exc:
        raise CliError(str(exc)) from None
    require_model(settings, " (or use --parse-only, which needs no model)")
    return Importer.with_settings_model(directory, settings, options)


def _run_single(args: argparse.Namespace, options: ImportOptions, transcript: Path) -> int:
    from ..restore.importer import parse_file

    parsed = parse_file(transcript, options)
    if args.parse_only:
        _print_warnings(transcript, parsed)
        if args.json:
            print_json(to_parse_only_json(parsed))
        else:
            print(render_parse_table(parsed))
        return EXIT_OK
    if not parsed.turns:
        _print_warnings(transcript, parsed)  # why a file with user messages gave none
        raise CliError(f"no human turns found in {transcript.name} (format {parsed.format}); nothing to restore")
    importer = _importer(args, options)
    progress = ProgressLine(dump_turns=args.dump_turns and not args.json, yes=args.yes, name=transcript.name)
    result = importer.import_parsed(transcript, parsed, progress)
    if result.status is ImportStatus.SKIPPED_ALREADY:  # before, or meanwhile
        return _report_already_imported(args, transcript, result.effort_id or "")
    landed, outcome = result.landed, result.outcome
    assert landed is not None and outcome is not None  # IMPORTED
    for note in outcome.notes:
        sys.stderr.write(f"restore: note: {note}\n")
    cost = importer.cost()
    if args.json:
        print_json({**_result_json(landed, outcome, args.dump_turns), "cost": cost.to_dict()})
    else:
        print(render_result(landed, outcome, _session_flag(args)))
        print(cost.render())
    return EXIT_OK


def _report_already_imported(args: argparse.Namespace, transcript: Path, effort_id: str) -> int:
    if args.json:
        print_json({"effort_id": effort_id, "status": "already imported", "file": str(transcript)})
    else:
        print(f"{transcript} is already imported as {effort_id} (--force imports a copy)")
    return EXIT_OK


def _run_bulk(args: argparse.Namespace, options: ImportOptions, transcripts: list[Path]) -> int:
    if args.parse_only:
        return _parse_only_bulk(args, options, transcripts)
    importer = _importer(args, options)
    progress = ProgressLine(dump_turns=args.dump_turns and not args.json, yes=args.yes)
    rows = importer.import_many(transcripts, _BulkProgress(progress, importer))
    cost = importer.cost()
    if args.json:
        print_json({"imports": [row.to_dict() for row in rows], "cost": cost.to_dict()})
    else:
        print(render_import_table(rows))
        print(cost.render())
    return EXIT_RUNTIME if any_failed(rows) else EXIT_OK


def _parse_only_bulk(args: argparse.Namespace, options: ImportOptions, transcripts: list[Path]) -> int:
    """``--parse-only`` over several files: ``{"files": [<single-file document + "file"> | {"file", "error"}]}``."""
    from ..restore.importer import parse_only

    files = parse_only(transcripts, options)
    for file in files:
        if file.parsed is not None:
            _print_warnings(file.file, file.parsed)
    if args.json:
        print_json({"files": [parsed.to_json() for parsed in files]})
    else:
        print("\n\n".join(_parse_block(parsed) for parsed in files))
    return EXIT_RUNTIME if any(parsed.error is not None for parsed in files) else EXIT_OK


# ----------------------------------------------------------------------------- printing
def _print_warnings(transcript: Path, parsed: ParsedTranscript) -> None:
    """The parse's sanity warnings, one line each on stderr (an import says them through its progress)."""
    for warning in parsed.warnings:
        sys.stderr.write(f"restore: warning: {transcript.name}: {warning}\n")


def _parse_block(file: ParsedFile) -> str:
    if file.parsed is None:
        return f"== {file.file}\nerror: {file.error}"
    return f"== {file.file}\n{render_parse_table(file.parsed)}"


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


def render_import_table(rows: list[ImportRow]) -> str:
    """The table that ends a bulk import: file, format, turns, effort id, status."""
    headers = ("file", "format", "turns", "effort id", "status")
    cells = [
        (str(r.file), r.format or "-", "-" if r.turns is None else str(r.turns), r.effort_id or "-", r.status_text)
        for r in rows
    ]
    widths = [min(60, max(len(h), *(len(c[i]) for c in cells))) for i, h in enumerate(headers[:-1])]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=False)) + "  status"]
    for cell in cells:
        shown = [c if len(c) <= w else "…" + c[-(w - 1) :] for c, w in zip(cell, widths, strict=False)]
        lines.append("  ".join(c.ljust(w) for c, w in zip(shown, widths, strict=False)) + "  " + cell[-1])
    counts = [f"{n} {kind}" for kind, n in tally(rows).items() if n or kind != "not tried"]
    lines.append(", ".join(counts) + f" of {len(rows)} file(s)")
    return "\n".join(lines)


def _dump_turns(turns: TurnSummaries) -> None:
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


def render_result(landed: Landed, outcome: RestoreOutcome, session_flag: str = "") -> str:
    """What a person sees at the end: the effort id, turns, summary and how to look at it."""
    skipped = outcome.turns.state.skipped_turns
    facts = [
        f"format {landed.source['format']}",
        f"{landed.turns} turn(s)" + (f" ({len(skipped)} could not be summarized)" if skipped else ""),
        f"{landed.source['artifacts']} file action(s)",
    ]
    if outcome.evidence is not None:
        facts.append(f"evidence: {outcome.evidence.describe()}")
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


def _result_json(landed: Landed, outcome: RestoreOutcome, with_turns: bool) -> dict[str, Any]:
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
