"""``ccm-tui restore TRANSCRIPT``: parse → turn summaries → evidence search → SESSION SUMMARY → effort.

``--parse-only [--json]`` needs no model: it prints the turns the parser
found. Otherwise the restore pipeline (:mod:`ccm_tui.restore.pipeline`) runs
against the configured model and the result lands as a concluded effort in the
chosen session. Progress goes to stderr: one updating line on a terminal,
plain lines otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import shlex
import sys
from pathlib import Path
from typing import Any, TextIO

from ..config import retry_base_seconds
from ..restore.turns import ParsedTranscript, TranscriptError, to_parse_only_json
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

BAR_WIDTH = 24


def add_parser(sub: Any) -> None:
    from ..restore.parse import FORMATS

    p = sub.add_parser("restore", help="import a coding-agent transcript as a concluded effort")
    session_options(p)
    model_options(p)
    debug_option(p)
    p.add_argument("transcript", type=Path)
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
    transcript = Path(args.transcript).expanduser()
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


def _parse(transcript: Path, args: argparse.Namespace) -> ParsedTranscript:
    from ..restore.parse import parse_transcript

    try:
        return parse_transcript(transcript, fmt=args.format or "auto", max_turns=args.max_turns)
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


def _restore(args: argparse.Namespace, transcript: Path, parsed: ParsedTranscript) -> int:
    """Run the model pipeline and land the result."""
    from ..config import ConfigError
    from ..core.engine import ManifestError, StoreError, TokenCounter, model_client
    from ..restore import landing
    from ..restore.ansi import strip_ansi
    from ..restore.evidence import choose_root
    from ..restore.parse import read_transcript_text
    from ..restore.pipeline import MAX_SUMMARY_RETRIES, restore_pipeline, source_extras
    from ..restore.summarizer import RestoreAborted

    directory = session_dir_from(args)
    try:
        landing.check_session_dir(directory)
        settings = load_settings_from(args)
    except (ManifestError, ConfigError) as exc:
        raise CliError(str(exc)) from None
    require_model(settings, " (or use --parse-only, which needs no model)")
    skip_evidence = args.skip_evidence_search or args.max_searches == 0
    root, reason = None, "no file access (evidence search skipped)"
    if not skip_evidence:
        try:
            root, reason = choose_root(args.root, parsed.cwd)
        except ValueError as exc:
            raise CliError(str(exc)) from None
    counter = TokenCounter(settings.model)
    llm = model_client(settings)
    progress = ProgressLine()
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
                llm,
                parsed,
                log_text,
                counter,
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
        raise CliError(f"restore stopped, nothing was imported: {exc}") from None
    finally:
        progress.clear()
    extra = source_extras(settings, outcome, args.max_turns)
    try:
        landed = landing.land(
            directory,
            parsed,
            transcript,
            outcome.session.summary,
            counter,
            report=outcome.session.report,
            extra_source=extra,
        )
    except StoreError as exc:
        raise CliError(f"could not write the restored effort: {exc}") from None
    for note in outcome.notes:
        sys.stderr.write(f"restore: note: {note}\n")
    if args.json:
        print_json(_result_json(landed, outcome, args.dump_turns))
    else:
        print(render_result(landed, outcome, _session_flag(args)))
    return 0


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
