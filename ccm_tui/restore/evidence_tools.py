"""The evidence search's tools: their definitions (OpenAI-style functions) and their handlers.

``search_log`` searches the transcript, ``search_file`` and ``read_file`` a
project file as it is now (through :class:`~.file_access.FileAccess`),
``list_artifacts`` lists the files the session touched; ``complete`` (handled by
the loop in :mod:`.evidence`) hands in the findings. A bad call raises
:class:`~.file_access.ToolError`, whose message goes back to the model. Results
are capped (:data:`RESULT_CHARS`), and so is the time a pattern may take.

Secret-looking values are redacted (:mod:`.redaction`) from the text searched and
read — the transcript and each file, before a pattern runs over them, so a search
cannot tell a secret's characters one by one — and from every result again.
"""

from __future__ import annotations

import json
import time
from typing import Any

from ccm_tui.restore.file_access import MAX_FILE_BYTES, FileAccess, OpenedFile, ToolError
from ccm_tui.restore.redaction import redact_text, redact_value
from ccm_tui.restore.turns import ParsedTranscript

try:  # the `regex` module (a tiktoken dependency) can time out a runaway pattern
    import regex as _re

    _HAS_TIMEOUT = True
except ImportError:  # pragma: no cover - tiktoken always brings it
    import re as _re

    _HAS_TIMEOUT = False

MAX_PATTERN_CHARS = 200
MAX_MATCHES = 20
COUNT_MATCHES_UPTO = 1_000
DEFAULT_CONTEXT_LINES = 2
MAX_CONTEXT_LINES = 10
LINE_CHARS = 300
RESULT_CHARS = 6_000
MAX_READ_LINES = 200
MAX_ARTIFACTS_LISTED = 200
SEARCH_SECONDS = 1.0


# ----------------------------------------------------------------------------- searching text
def compile_pattern(pattern: Any, literal: bool = False):
    """A case-insensitive pattern: a regex when it compiles (and ``literal`` is false), else literal."""
    if not isinstance(pattern, str) or not pattern:
        raise ToolError("'pattern' must be a non-empty string")
    if len(pattern) > MAX_PATTERN_CHARS:
        raise ToolError(f"'pattern' is longer than {MAX_PATTERN_CHARS} characters")
    if not literal:
        try:
            return _re.compile(pattern, _re.IGNORECASE), "regex"
        except (_re.error, OverflowError, RecursionError):
            pass
    return _re.compile(_re.escape(pattern), _re.IGNORECASE), "literal"


def _clip(line: str, start: int = 0) -> str:
    """A line cut to :data:`LINE_CHARS` around position ``start``."""
    if len(line) <= LINE_CHARS:
        return line
    begin = max(0, min(start - LINE_CHARS // 3, len(line) - LINE_CHARS))
    return ("…" if begin else "") + line[begin : begin + LINE_CHARS] + ("…" if begin + LINE_CHARS < len(line) else "")


def search_lines(lines: list[str], compiled, context: int) -> dict[str, Any]:
    """Matches of ``compiled`` in ``lines`` with ``context`` lines around each (1-based numbers)."""
    deadline = time.monotonic() + SEARCH_SECONDS
    matches: list[dict[str, Any]] = []
    total = 0
    timed_out = False
    for index, line in enumerate(lines):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            timed_out = True
            break
        try:
            found = compiled.search(line, timeout=remaining) if _HAS_TIMEOUT else compiled.search(line)
        except TimeoutError:
            timed_out = True
            break
        if not found:
            continue
        total += 1
        if len(matches) < MAX_MATCHES:
            lo, hi = max(0, index - context), min(len(lines), index + context + 1)
            entry: dict[str, Any] = {"line": index + 1, "text": _clip(line, found.start())}
            if context:
                entry["context"] = "\n".join(f"{n + 1}: {_clip(lines[n])}" for n in range(lo, hi))
            matches.append(entry)
        if total >= COUNT_MATCHES_UPTO:
            break
    out: dict[str, Any] = {"matches": matches, "total_matches": total}
    if total > len(matches):
        out["note"] = f"showing the first {len(matches)} of {total}{'+' if total >= COUNT_MATCHES_UPTO else ''} matches"
    if timed_out:
        out["note"] = "the search stopped early (time limit); use a simpler pattern"
    return out


def _context_lines(value: Any) -> int:
    if value is None:
        return DEFAULT_CONTEXT_LINES
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ToolError("'context_lines' must be a number")
    return max(0, min(MAX_CONTEXT_LINES, int(value)))


def _line_number(value: Any, name: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or int(value) < 1:
        raise ToolError(f"'{name}' must be a line number ≥ 1")
    return int(value)


def to_json(data: dict[str, Any]) -> str:
    """A tool result as JSON, cut to :data:`RESULT_CHARS` by dropping matches/lines from the end."""
    text = json.dumps(data, ensure_ascii=False)
    for key in ("matches", "artifacts"):
        while len(text) > RESULT_CHARS and isinstance(data.get(key), list) and data[key]:
            data[key].pop()
            data["truncated"] = True
            text = json.dumps(data, ensure_ascii=False)
    if len(text) > RESULT_CHARS and isinstance(data.get("content"), str):
        data["content"] = data["content"][: RESULT_CHARS - 400] + "\n[… cut …]"
        data["truncated"] = True
        text = json.dumps(data, ensure_ascii=False)
    return text


# ----------------------------------------------------------------------------- the tools
def _fn(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": False,
            },
        },
    }


SEARCH_LOG = _fn(
    "search_log",
    "Search the session transcript (case-insensitive regex; invalid regex or literal=true: plain text). "
    "Returns matching lines with line numbers and context.",
    {
        "pattern": {"type": "string", "description": "regex or text to find"},
        "context_lines": {
            "type": "integer",
            "description": f"lines around each match (0-{MAX_CONTEXT_LINES}, default 2)",
        },
        "literal": {"type": "boolean", "description": "treat the pattern as plain text"},
    },
    ["pattern"],
)
SEARCH_FILE = _fn(
    "search_file",
    "Search one file of the project as it is now on disk (case-insensitive regex or text).",
    {
        "path": {
            "type": "string",
            "description": "file path, relative to the project root (or as the transcript wrote it)",
        },
        "pattern": {"type": "string"},
        "literal": {"type": "boolean"},
    },
    ["path", "pattern"],
)
READ_FILE = _fn(
    "read_file",
    f"Read lines of a project file as it is now on disk (at most {MAX_READ_LINES} lines per call).",
    {
        "path": {"type": "string"},
        "start_line": {"type": "integer", "description": "first line, 1-based (default 1)"},
        "end_line": {"type": "integer", "description": "last line, inclusive"},
    },
    ["path"],
)
LIST_ARTIFACTS = _fn(
    "list_artifacts", "List the files the session read, edited or created, with turns and actions.", {}, []
)
COMPLETE = _fn(
    "complete",
    "Finish the evidence search and hand in the findings.",
    {"findings": {"type": "string", "description": "short factual bullet points, each citing its source"}},
    ["findings"],
)
TOOLS = [SEARCH_LOG, SEARCH_FILE, READ_FILE, LIST_ARTIFACTS, COMPLETE]


class EvidenceTools:
    """The handlers behind the tool definitions, over one transcript text and one file root."""

    def __init__(self, log_text: str, parsed: ParsedTranscript, files: FileAccess) -> None:
        self._log_text = log_text
        self._lines: list[str] | None = None
        self.parsed = parsed
        self.files = files

    @property
    def lines(self) -> list[str]:
        """The transcript's lines, redacted once, when first searched (a search may never come)."""
        if self._lines is None:
            self._lines = redact_text(self._log_text).split("\n")
            self._log_text = ""
        return self._lines

    def _open(self, path: Any) -> tuple[OpenedFile, list[str]]:
        """A file the policy allows, and its lines with secret-looking values redacted."""
        opened = self.files.open(path)
        return opened, redact_text(opened.text).split("\n")

    def run(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        """Run one tool; raises ToolError for bad calls."""
        handler = {
            "search_log": self.search_log,
            "search_file": self.search_file,
            "read_file": self.read_file,
            "list_artifacts": self.list_artifacts,
        }.get(name)
        if handler is None:
            raise ToolError(
                f"unknown tool {name!r}; use one of search_log, search_file, read_file, list_artifacts, complete"
            )
        return redact_value(handler(**args))

    def search_log(
        self, pattern: Any = None, context_lines: Any = None, literal: Any = False, **extra: Any
    ) -> dict[str, Any]:
        _no_extra(extra)
        compiled, mode = compile_pattern(pattern, bool(literal))
        found = search_lines(self.lines, compiled, _context_lines(context_lines))
        return {"pattern": pattern, "mode": mode, **found}

    def search_file(self, path: Any = None, pattern: Any = None, literal: Any = False, **extra: Any) -> dict[str, Any]:
        _no_extra(extra)
        compiled, mode = compile_pattern(pattern, bool(literal))
        opened, lines = self._open(path)
        found = search_lines(lines, compiled, 1)
        out = {"path": opened.relative, "pattern": pattern, "mode": mode, **found}
        if opened.truncated:
            out["file_note"] = f"only the first {MAX_FILE_BYTES // 1024} KB of {opened.size} bytes were searched"
        return out

    def read_file(self, path: Any = None, start_line: Any = None, end_line: Any = None, **extra: Any) -> dict[str, Any]:
        _no_extra(extra)
        start = _line_number(start_line, "start_line") or 1
        end = _line_number(end_line, "end_line")
        opened, lines = self._open(path)
        if end is None or end > start + MAX_READ_LINES - 1:
            end = start + MAX_READ_LINES - 1
        if end < start:
            raise ToolError("'end_line' is before 'start_line'")
        end = min(end, len(lines))
        if start > len(lines):
            raise ToolError(f"{opened.relative} has only {len(lines)} line(s)")
        content = "\n".join(f"{n}: {_clip(lines[n - 1])}" for n in range(start, end + 1))
        out: dict[str, Any] = {
            "path": opened.relative,
            "start_line": start,
            "end_line": end,
            "total_lines": len(lines),
            "content": content,
        }
        if opened.truncated:
            out["file_note"] = f"only the first {MAX_FILE_BYTES // 1024} KB of {opened.size} bytes are readable"
        return out

    def list_artifacts(self, **extra: Any) -> dict[str, Any]:
        _no_extra(extra)
        merged: dict[str, dict[str, Any]] = {}
        for turn in self.parsed.turns:
            for artifact in turn.artifacts:
                entry = merged.setdefault(
                    artifact.path, {"path": artifact.path, "actions": [], "turns": [], "lines": []}
                )
                if artifact.action not in entry["actions"]:
                    entry["actions"].append(artifact.action)
                if turn.turn not in entry["turns"]:
                    entry["turns"].append(turn.turn)
                if len(entry["lines"]) < 5:
                    entry["lines"].append(artifact.line)
        entries = list(merged.values())
        for entry in entries[:MAX_ARTIFACTS_LISTED]:
            entry["readable_now"] = self.files.root is not None and self.files.exists(entry["path"])
        return {"artifacts": entries[:MAX_ARTIFACTS_LISTED], "total": len(entries), "file_access": self.files.reason}


def _no_extra(extra: dict[str, Any]) -> None:
    if extra:
        raise ToolError(f"unknown argument(s): {', '.join(sorted(extra))}")
