"""Agentic evidence search over a restored transcript and the files it touched .

The model gets the turn summaries and the accumulated state, and real tool
calls (OpenAI-style function definitions): ``search_log``, ``search_file``,
``read_file``, ``list_artifacts`` and ``complete``. The loop ends when the
model stops calling tools or calls ``complete``; after ``max_rounds`` rounds of
tool calls it is asked to complete with what it has. Tool errors go back to the
model as JSON errors and the loop goes on.

A transcript is untrusted input, and so is every path the model names after
reading it. File tools read only regular files under one root directory
(resolved with ``realpath``, so neither ``..`` nor a symlink leads out of it),
never under ``/proc``, ``/sys``, ``/dev`` or ``/run``, never files that look
like secrets (``.env``, keys, ``.git/``, ``.ssh/``…), and at most
:data:`MAX_FILE_BYTES` of each. Without a root there is no file access at all.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from ccm_tui import paths
from ccm_tui.core.chat_model import ChatModel
from ccm_tui.core.llm import LLMError, parse_arguments
from ccm_tui.restore.turns import ParsedTranscript

try:  # the `regex` module (a tiktoken dependency) can time out a runaway pattern
    import regex as _re

    _HAS_TIMEOUT = True
except ImportError:  # pragma: no cover - tiktoken always brings it
    import re as _re

    _HAS_TIMEOUT = False

DEFAULT_MAX_ROUNDS = 8
MAX_CALLS_PER_ROUND = 8
MAX_PATTERN_CHARS = 200
MAX_PATH_CHARS = 1024
MAX_MATCHES = 20
COUNT_MATCHES_UPTO = 1_000
DEFAULT_CONTEXT_LINES = 2
MAX_CONTEXT_LINES = 10
LINE_CHARS = 300
RESULT_CHARS = 6_000
MAX_FILE_BYTES = 256 * 1024
MAX_READ_LINES = 200
MAX_ARTIFACTS_LISTED = 200
SEARCH_SECONDS = 1.0
CONTEXT_TOKENS = 6_000

# Trees never read, whatever the root: kernel and device views of the machine.
FORBIDDEN_TREES = ("/proc", "/sys", "/dev", "/run")
# System directories that a transcript's recorded cwd may not make the default root.
_SYSTEM_DIRS = (
    "/",
    "/etc",
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib64",
    "/boot",
    "/var",
    "/opt",
    "/root",
    "/tmp",
    "/home",
    "/Users",
    *FORBIDDEN_TREES,
)
# Files that may hold secrets: never sent to a model.
_SECRET_DIRS = {".git", ".ssh", ".gnupg", ".aws", ".azure", ".kube", ".docker", ".password-store"}
_SECRET_NAMES = (
    ".env",
    ".env.*",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    ".netrc",
    ".npmrc",
    ".pypirc",
    ".git-credentials",
    "credentials",
    "credentials.*",
    "*.keystore",
    "secrets.*",
    ".htpasswd",
)

Progress = Callable[[int, int, str], None]
_DRIVE = re.compile(r"^[A-Za-z]:/")


class ToolError(Exception):
    """A tool call that cannot be served; the message goes back to the model."""


# ----------------------------------------------------------------------------- roots and paths
def _within(path: str, root: str) -> bool:
    try:
        return os.path.commonpath([path, root]) == root
    except ValueError:  # different drives / mix of absolute and relative
        return False


def _in_forbidden_tree(path: str) -> bool:
    return any(_within(path, tree) for tree in FORBIDDEN_TREES)


def choose_root(explicit: Path | None, recorded_cwd: str | None) -> tuple[Path | None, str]:
    """The directory file tools may read, and a one-line reason for the user and the model.

    ``--root`` wins (it must be an existing directory: ValueError otherwise). Else the
    transcript's recorded cwd, if it is an existing directory strictly inside the user's
    home directory and not inside a hidden one (``~/.ssh``, ``~/.aws``, ``~/.config``…):
    a transcript is untrusted and may not choose what the model reads. Else none.
    """
    if explicit is not None:
        real = os.path.realpath(os.path.expanduser(str(explicit)))
        if not os.path.isdir(real):
            raise ValueError(f"--root {explicit} is not a directory")
        return Path(real), f"files under {real} (--root)"
    if not recorded_cwd:
        return None, "no file access: the transcript records no working directory and no --root was given"
    if _DRIVE.match(recorded_cwd.replace("\\", "/")):
        return None, (
            f"no file access: the recorded working directory {recorded_cwd} is a Windows path "
            "(pass --root to point at the project here)"
        )
    if not os.path.isabs(recorded_cwd) or "\x00" in recorded_cwd:
        return None, f"no file access: the recorded working directory {recorded_cwd!r} is not an absolute path"
    real = os.path.realpath(recorded_cwd)
    if not os.path.isdir(real):
        return None, (
            f"no file access: the recorded working directory {recorded_cwd} does not exist here "
            "(pass --root to point at the project)"
        )
    home = os.path.realpath(os.path.expanduser("~"))
    if real == home or not _within(real, home) or real in _SYSTEM_DIRS or _in_forbidden_tree(real):
        return None, (
            f"no file access: the recorded working directory {real} is not a project directory inside "
            f"your home directory {home} (pass --root to allow it)"
        )
    hidden = [part for part in Path(os.path.relpath(real, home)).parts if part.startswith(".")]
    if hidden:
        return None, (
            f"no file access: the recorded working directory {real} is inside the hidden directory "
            f"{hidden[0]} of your home (pass --root to allow it)"
        )
    return Path(real), f"files under {real} (the transcript's working directory)"


def _looks_secret(relative: str) -> bool:
    parts = PurePosixPath(relative.replace(os.sep, "/")).parts
    if any(part in _SECRET_DIRS for part in parts[:-1]) or (parts and parts[-1] in _SECRET_DIRS):
        return True
    name = parts[-1].lower() if parts else ""
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in _SECRET_NAMES)


@dataclass
class OpenedFile:
    """A regular file read (at most :data:`MAX_FILE_BYTES`) from under the root."""

    relative: str
    text: str
    size: int
    truncated: bool


def _recorded(cwd: str | None) -> str | None:
    """The transcript's cwd with forward slashes; None unless absolute (POSIX or drive letter)."""
    if not cwd or "\x00" in cwd:
        return None
    cwd = cwd.replace("\\", "/")
    if _DRIVE.match(cwd):
        return cwd.rstrip("/") or cwd
    return os.path.normpath(cwd) if os.path.isabs(cwd) else None


class FileAccess:
    """Resolves model-given paths strictly under one root and reads regular files there."""

    def __init__(self, root: Path | None, reason: str = "", recorded_cwd: str | None = None) -> None:
        self.root = os.path.realpath(root) if root is not None else None
        self.reason = reason or ("no file access" if root is None else f"files under {self.root}")
        self.recorded_cwd = _recorded(recorded_cwd)

    def resolve(self, path: Any) -> tuple[str, str]:
        """``(real path, path relative to the root)``; ToolError for anything not allowed."""
        if self.root is None:
            raise ToolError(self.reason)
        if not isinstance(path, str) or not path.strip():
            raise ToolError("'path' must be a non-empty string")
        if "\x00" in path or len(path) > MAX_PATH_CHARS:
            raise ToolError("'path' is not a usable file name")
        given = self._from_recorded_cwd(path.strip().replace("\\", "/"))
        candidate = given if os.path.isabs(given) else os.path.join(self.root, given)
        real = os.path.realpath(candidate)
        if not _within(real, self.root):
            if _within(os.path.normpath(candidate), self.root):
                raise ToolError(f"refused: {path} leads outside the readable root (through a symlink)")
            raise ToolError(f"refused: {path} is outside the readable root")
        if _in_forbidden_tree(real):
            raise ToolError(f"refused: {path} is a system or device path")
        relative = os.path.relpath(real, self.root)
        if _looks_secret(relative):
            raise ToolError(f"refused: {path} may hold secrets")
        return real, relative

    def _from_recorded_cwd(self, given: str) -> str:
        """A path under the transcript's recorded cwd, made relative (the project as recorded → as here).

        Windows paths (``C:\\proj\\app.py`` with cwd ``C:\\proj``) map too, case-insensitively."""
        cwd = self.recorded_cwd
        if not cwd:
            return given
        if _DRIVE.match(cwd) and _DRIVE.match(given):
            prefix = cwd.rstrip("/") + "/"
            return given[len(prefix) :] if given.lower().startswith(prefix.lower()) else given
        if os.path.isabs(given):
            normal = os.path.normpath(given)
            if _within(normal, cwd) and not _within(normal, self.root or "/"):
                return os.path.relpath(normal, cwd)
        return given

    def open(self, path: Any) -> OpenedFile:
        """Read a regular file under the root (capped); ToolError otherwise."""
        real, relative = self.resolve(path)
        try:
            info = os.stat(real)
        except FileNotFoundError:
            raise ToolError(f"no such file: {relative}") from None
        except OSError as exc:
            raise ToolError(f"cannot read {relative}: {exc.strerror}") from None
        if not stat.S_ISREG(info.st_mode):
            raise ToolError(f"refused: {relative} is not a regular file")
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(real, flags)
        except OSError as exc:
            raise ToolError(f"cannot read {relative}: {exc.strerror}") from None
        try:
            opened = os.fstat(fd)
            if not stat.S_ISREG(opened.st_mode) or (opened.st_dev, opened.st_ino) != (info.st_dev, info.st_ino):
                raise ToolError(f"refused: {relative} changed while being opened")
            data = os.read(fd, MAX_FILE_BYTES + 1)
        finally:
            os.close(fd)
        if b"\x00" in data[:8192]:
            raise ToolError(f"refused: {relative} is a binary file")
        truncated = len(data) > MAX_FILE_BYTES
        text = data[:MAX_FILE_BYTES].decode("utf-8", errors="replace")
        return OpenedFile(relative, text, opened.st_size, truncated)

    def exists(self, path: str) -> bool:
        """Whether ``path`` names a readable regular file under the root."""
        try:
            real, _ = self.resolve(path)
            return stat.S_ISREG(os.stat(real).st_mode)
        except (ToolError, OSError):
            return False


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
        self.lines = log_text.split("\n")
        self.parsed = parsed
        self.files = files

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
        return handler(**args)

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
        opened = self.files.open(path)
        found = search_lines(opened.text.split("\n"), compiled, 1)
        out = {"path": opened.relative, "pattern": pattern, "mode": mode, **found}
        if opened.truncated:
            out["file_note"] = f"only the first {MAX_FILE_BYTES // 1024} KB of {opened.size} bytes were searched"
        return out

    def read_file(self, path: Any = None, start_line: Any = None, end_line: Any = None, **extra: Any) -> dict[str, Any]:
        _no_extra(extra)
        start = _line_number(start_line, "start_line") or 1
        end = _line_number(end_line, "end_line")
        opened = self.files.open(path)
        lines = opened.text.split("\n")
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


# ----------------------------------------------------------------------------- the loop
@dataclass
class EvidenceResult:
    """What the evidence search found and how it ended."""

    findings: str
    rounds: int = 0
    calls: list[dict[str, Any]] = field(default_factory=list)  # {"name", "arguments", "ok"}
    ended_by: str = "complete"  # complete | no_tool_calls | max_searches | error | disabled
    notes: list[str] = field(default_factory=list)


def evidence_messages(context: str, max_rounds: int, file_access: str) -> list[dict[str, Any]]:
    """The opening request of the loop: instructions and the material to check."""
    system = (
        paths.prompt("restore_evidence")
        .replace("{max_rounds}", str(max_rounds))
        .replace("{file_access}", f"File access: {file_access}.")
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": context}]


async def gather_evidence(
    llm: ChatModel,
    tools: EvidenceTools,
    context: str,
    *,
    max_rounds: int = DEFAULT_MAX_ROUNDS,
    progress: Progress | None = None,
) -> EvidenceResult:
    """Run the tool loop: at most ``max_rounds`` rounds of tool calls, then force completion.

    Provider errors end the search (noted) with whatever was found; they never raise.
    """
    if max_rounds <= 0:
        return EvidenceResult("", ended_by="disabled", notes=["evidence search disabled (--max-searches 0)"])
    messages = evidence_messages(context, max_rounds, tools.files.reason)
    result = EvidenceResult("")
    for round_no in range(1, max_rounds + 1):
        if progress:
            progress(round_no - 1, max_rounds, f"evidence search round {round_no}")
        try:
            completion = await llm.chat_once(messages, TOOLS)
        except LLMError as err:
            result.notes.append(f"evidence search stopped: {err}")
            result.ended_by = "error"
            result.findings = _fallback_findings(result)
            return result
        if not completion.tool_calls:
            result.findings = completion.content.strip()
            result.ended_by = "no_tool_calls"
            return result
        result.rounds = round_no
        findings = _run_round(tools, completion, messages, result)
        if findings is not None:
            result.findings = findings
            result.ended_by = "complete"
            return result
    if progress:
        progress(max_rounds, max_rounds, "evidence search: final findings")
    return await _force_completion(llm, messages, result, max_rounds)


def _run_round(tools: EvidenceTools, completion, messages: list[dict[str, Any]], result: EvidenceResult) -> str | None:
    """Answer every tool call of one round; returns the findings if ``complete`` was called."""
    messages.append(
        {
            "role": "assistant",
            "content": completion.content or None,
            "tool_calls": [c.as_message_part() for c in completion.tool_calls],
        }
    )
    findings: str | None = None
    for index, call in enumerate(completion.tool_calls):
        args, error = parse_arguments(call.arguments)
        payload: dict[str, Any]
        if index >= MAX_CALLS_PER_ROUND:
            payload = {
                "error": f"too many tool calls in one round (at most {MAX_CALLS_PER_ROUND}); this one was not run"
            }
        elif error is not None:
            payload = {"error": error}
        elif call.name == "complete":
            text = args.get("findings") if args else None
            if isinstance(text, str) and text.strip():
                findings = text.strip()
                payload = {"status": "complete"}
            else:
                payload = {"error": "'findings' must be a non-empty string"}
        else:
            try:
                payload = {"ok": True, **tools.run(call.name, args or {})}
            except ToolError as exc:
                payload = {"error": str(exc)}
            except TypeError:
                payload = {"error": f"bad arguments for {call.name}"}
        ok = "error" not in payload
        result.calls.append({"name": call.name, "arguments": args if args is not None else call.arguments, "ok": ok})
        messages.append({"role": "tool", "tool_call_id": call.id, "content": to_json(payload)})
    return findings


async def _force_completion(
    llm: ChatModel, messages: list[dict[str, Any]], result: EvidenceResult, max_rounds: int
) -> EvidenceResult:
    """The search budget is spent: ask for the findings, offering only the ``complete`` tool."""
    result.ended_by = "max_searches"
    messages.append(
        {
            "role": "user",
            "content": f"You have used all {max_rounds} rounds of searches. "
            "Call complete now with your findings from what you have seen; no more searches.",
        }
    )
    try:
        completion = await llm.chat_once(messages, [COMPLETE])
    except LLMError as err:
        result.notes.append(f"evidence search: the final findings request failed: {err}")
        result.findings = _fallback_findings(result)
        return result
    for call in completion.tool_calls:
        args, _ = parse_arguments(call.arguments)
        text = (args or {}).get("findings")
        if call.name == "complete" and isinstance(text, str) and text.strip():
            result.findings = text.strip()
            return result
    result.findings = completion.content.strip() or _fallback_findings(result)
    return result


def _fallback_findings(result: EvidenceResult) -> str:
    if not result.calls:
        return ""
    ok = sum(1 for c in result.calls if c["ok"])
    return f"(no findings were handed in; {len(result.calls)} tool call(s) were made, {ok} succeeded)"


def evidence_context(parsed: ParsedTranscript, digest: str, state_text: str, name: str) -> str:
    """The material the evidence search checks: session facts, turn summaries, state."""
    return "\n\n".join(
        [
            f"SESSION: {name} ({parsed.format}, {len(parsed.turns)} turn(s); transcript has line numbers "
            "that search_log reports)",
            "TURN SUMMARIES:\n" + digest,
            "ACCUMULATED STATE:\n" + state_text,
        ]
    )


__all__ = [
    "COMPLETE",
    "EvidenceResult",
    "EvidenceTools",
    "FileAccess",
    "TOOLS",
    "ToolError",
    "choose_root",
    "evidence_context",
    "gather_evidence",
]
