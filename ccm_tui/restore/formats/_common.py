"""Helpers shared by the format parsers: line splitting and turn assembly."""

from __future__ import annotations

import json
import re
from typing import Any

from ccm_tui.restore.turns import Artifact, ArtifactAction, ParsedTranscript, TranscriptError, TurnRound

_PATH_STRIP = " \t\"'`"
_MAX_PATH_LENGTH = 1024
_MAX_TAIL_PARTS = 32
_BARE_SLASH_COMMAND = re.compile(r"^/[A-Za-z][\w:-]*$")
# What an agent writes as a user message though the person did not type it, as the exporters of its
# sessions copy it: Claude Code's summary that opens a compacted session and its interrupt marker, and
# the messages a choice in the agent's own question sends (VS Code Copilot's "Continue" button, Codex
# plan mode's "Yes, implement this plan", also with a fresh context).
_PLAN_CHOICE = "the plan-mode choice to implement the plan (not a new request)"
_TOOL_WRITTEN = (
    ("This session is being continued from a previous conversation", "compaction summary"),
    ("[Request interrupted by user", "interrupt marker"),
    ('@agent Continue: "Continue to iterate?"', "the Continue button of Copilot's question (a choice, not a request)"),
    ("Implement the plan. If this thread has no active goal", _PLAN_CHOICE),
    ("A previous agent produced the plan below", _PLAN_CHOICE),
)
_TOOL_WRITTEN_WHOLE = {"Implement the plan.": _PLAN_CHOICE}


def split_lines(text: str) -> list[str]:
    """Split on ``\\n`` only (so numbering matches the file) and drop a trailing ``\\r``."""
    return [line[:-1] if line.endswith("\r") else line for line in text.split("\n")]


def squash(text: str) -> str:
    """Collapse all whitespace runs to single spaces, for fuzzy text comparison."""
    return " ".join(text.split())


def tool_written(text: str) -> str | None:
    """What a user message is when the agent wrote it, not the person ("compaction summary"), else None."""
    start = text.lstrip()
    whole = _TOOL_WRITTEN_WHOLE.get(start.rstrip())
    return whole or next((label for prefix, label in _TOOL_WRITTEN if start.startswith(prefix)), None)


def clean_path(raw: str) -> str | None:
    """Trim quotes, backticks and trailing punctuation from a path; None if unusable."""
    path = raw.strip(_PATH_STRIP).rstrip(".,;:").strip(_PATH_STRIP)
    if not path or len(path) > _MAX_PATH_LENGTH or "\n" in path:
        return None
    return path


class FileNames:
    """Remembers the first spelling of every file so later mentions reuse it.

    Two spellings name the same file when, with ``/`` for ``\\``, one equals
    the other or ends with ``/`` plus the other (a relative path and the
    absolute path of the same file).
    """

    def __init__(self) -> None:
        self._by_path: dict[str, str] = {}
        self._by_suffix: dict[str, str] = {}

    def spelling_of(self, path: str) -> tuple[str, bool]:
        """The first-seen spelling of ``path`` and whether the file was seen before."""
        parts = path.replace("\\", "/").removeprefix("./").split("/")
        normalized = "/".join(parts)
        tails = _tails(parts)
        known = self._by_suffix.get(normalized)
        if known is None:
            known = next((self._by_path[tail] for tail in tails[1:] if tail in self._by_path), None)
        if known is not None:
            return known, True
        self._by_path[normalized] = path
        for tail in tails:
            self._by_suffix.setdefault(tail, path)
        return path, False


def _tails(parts: list[str]) -> list[str]:
    """The path and its trailing sub-paths, longest first: a/b/c, b/c, c (at most 32 parts deep)."""
    start = max(0, len(parts) - _MAX_TAIL_PARTS)
    tails = ["/".join(parts[index:]) for index in range(start, len(parts))]
    return tails if start == 0 else ["/".join(parts), *tails]


class TurnBuilder:
    """Accumulates user messages, agent output and artifacts into turn rounds.

    Parsers feed events in conversation order. Every human request opens a new
    turn, also when the one before got no answer: a request sent again after an
    error or an interrupt, a corrected typo and two messages in a row are each
    a request, as the person made them. A parser that knows a piece of text
    belongs to the request before it (an image pasted with it, aider's re-send
    after ``/clear``) adds it with :meth:`join`. A message that is only a slash
    command (``/compact``) is noted, not a turn.
    """

    def __init__(self) -> None:
        self.turns: list[TurnRound] = []
        self._notes: list[tuple[int, int, str]] = []
        self._orphan_span: tuple[int, int] | None = None
        self._files = FileNames()
        self._turn_actions: set[tuple[str, ArtifactAction]] = set()

    def user(self, text: str, start: int, end: int | None = None) -> None:
        """Record a human message spanning lines ``start``..``end``."""
        text = text.strip()
        if not text:
            return
        if _BARE_SLASH_COMMAND.match(text):
            self.note(start, f"slash command {text}")
            return
        self._turn_actions = set()
        self.turns.append(
            TurnRound(
                turn=len(self.turns) + 1,
                user_messages=[text],
                agent_responses=[],
                start_line=start,
                end_line=end or start,
            )
        )

    def join(self, text: str, start: int, end: int | None = None) -> None:
        """Add ``text`` to the current request as another part of it (a new turn when there is none)."""
        text = text.strip()
        if not self.turns:
            self.user(text, start, end)
        elif text:
            self._extend(self.turns[-1], text, end or start)

    def agent(self, text: str, start: int, end: int | None = None) -> None:
        """Record agent output; text before the first user message is noted as skipped."""
        text = text.strip()
        if not text:
            return
        if not self.turns:
            self._note_orphan(start, end or start)
            return
        current = self.turns[-1]
        current.agent_responses.append(text)
        current.end_line = max(current.end_line, end or start)

    def agent_continue(self, text: str, line: int) -> None:
        """Add to the last agent response (e.g. the result of the tool call it made)."""
        text = text.strip()
        if not text:
            return
        current = self.turns[-1] if self.turns else None
        if current is None or not current.agent_responses:
            self.agent(text, line)
            return
        current.agent_responses[-1] += "\n\n" + text
        current.end_line = max(current.end_line, line)

    def artifact(self, raw_path: str, action: ArtifactAction, line: int) -> None:
        """Attach a file action to the current turn.

        A file keeps the spelling it was first seen with (``app\\x.css`` and
        ``/repo/app/x.css`` are both ``app/x.css`` once that was seen). Writing
        a file already seen is an edit, not a creation; an edit right after the
        creation, or a repeated action, adds nothing to the turn.
        """
        path = clean_path(raw_path)
        if path is None or not self.turns:
            return
        path, seen_before = self._files.spelling_of(path)
        if action == "created" and seen_before:
            action = "edited"
        if (path, action) in self._turn_actions or (action == "edited" and (path, "created") in self._turn_actions):
            return
        self._turn_actions.add((path, action))
        current = self.turns[-1]
        current.artifacts.append(Artifact(path=path, action=action, line=line))
        current.end_line = max(current.end_line, line)

    def note(self, line: int, message: str, last_line: int | None = None) -> None:
        """Record a one-line, human-readable note about something skipped."""
        self._notes.append((line, last_line or line, message))

    def result(self, fmt: str, *, cwd: str | None = None, title: str | None = None) -> ParsedTranscript:
        """Finish and return the parsed transcript (notes in line order)."""
        notes = list(self._notes)
        if self._orphan_span is not None:
            notes.append((*self._orphan_span, "text before the first user message"))
        skipped = [f"{_where(first, last)}: {message}" for first, last, message in sorted(notes, key=lambda n: n[0])]
        return ParsedTranscript(format=fmt, turns=self.turns, skipped=skipped, cwd=cwd, title=title)

    @staticmethod
    def _extend(turn: TurnRound, text: str, end: int) -> None:
        turn.user_messages.append(text)
        turn.end_line = max(turn.end_line, end)

    def _note_orphan(self, start: int, end: int) -> None:
        if self._orphan_span is None:
            self._orphan_span = (start, end)
        else:
            self._orphan_span = (self._orphan_span[0], max(self._orphan_span[1], end))


def _where(first: int, last: int) -> str:
    return f"line {first}" if first == last else f"lines {first}-{last}"


def json_document(text: str, what: str) -> Any:
    """A transcript that is one JSON document (control characters inside strings tolerated), or a
    one-line :class:`TranscriptError` naming what it was expected to be ("a ChatGPT export")."""
    try:
        return json.loads(text, strict=False)
    except (ValueError, RecursionError) as error:
        raise TranscriptError(f"not {what}: invalid JSON ({error})") from None
