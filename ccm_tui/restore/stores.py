"""Where the agents keep their sessions, and what a captured file says about its agent session.

:func:`agent_stores` lists the session stores of the README's import table under a home
directory (Claude Code, Codex CLI, Gemini CLI, opencode, the Cline family in VS Code-like
editors); :func:`project_stores` the aider histories and SpecStory folders under project
roots. :func:`candidate_files` walks a store without following symbolic links (so a
symlink loop is never entered) and keeps the files a parser may read. :func:`describe`
names a parsed file's agent, project, id, start date and the command that resumes it.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from ccm_tui.restore.discovery import TRANSCRIPT_SUFFIXES, is_opencode_storage_detail
from ccm_tui.restore.turns import ParsedTranscript

# A transcript format's agent: what a capture session is named after (``capture-<agent>``).
AGENT_OF_FORMAT = {
    "claude-code": "claude-code",
    "claude-code-terminal": "claude-code",
    "codex": "codex",
    "gemini-cli": "gemini",
    "gemini-share": "gemini",
    "opencode": "opencode",
    "opencode-export": "opencode",
    "opencode-json": "opencode",
    "opencode-storage": "opencode",
    "cline": "cline",
    "aider": "aider",
    "specstory": "specstory",
    "chatgpt": "chatgpt",
    "markdown": "markdown",
}
CAPTURE_PREFIX = "capture-"

# The folders of VS Code-like editors' extension storage that hold Cline-family task folders.
_EDITORS = ("Code", "Code - Insiders", "Cursor", "VSCodium", "Windsurf")
_CLINE_EXTENSIONS = ("saoudrizwan.claude-dev", "rooveterinaryinc.roo-cline", "kilocode.kilo-code")
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.IGNORECASE)
_TIMESTAMP = re.compile(r'"(?:timestamp|created_at|startTime|time)"\s*:\s*"(\d{4}-\d\d-\d\d[T ][0-9:.]+Z?)"')
_PLAIN_FOLDERS = frozenset({"history", ".specstory", "chats", "tasks", "sessions", "session", "storage", "projects"})


def capture_session_name(agent: str) -> str:
    """The ccm session an agent's captured sessions go to."""
    return f"{CAPTURE_PREFIX}{agent}"


def agent_stores(home: Path) -> list[Path]:
    """The agents' session stores that exist under ``home`` (the README's import table)."""
    found = [
        home / ".claude" / "projects",
        home / ".codex" / "sessions",
        home / ".gemini" / "tmp",
        home / ".local" / "share" / "opencode" / "storage" / "session",
    ]
    for base in (home / ".config", home / "Library" / "Application Support"):
        for editor in _EDITORS:
            for extension in _CLINE_EXTENSIONS:
                found.append(base / editor / "User" / "globalStorage" / extension / "tasks")
    return [path for path in found if path.is_dir()]


def project_stores(root: Path) -> list[Path]:
    """Under a project root: the root itself when it holds aider's history, and its SpecStory folder."""
    found: list[Path] = []
    if (root / ".aider.chat.history.md").is_file():
        found.append(root / ".aider.chat.history.md")
    if (root / ".specstory" / "history").is_dir():
        found.append(root / ".specstory" / "history")
    return found


@dataclass
class Walked:
    """What a walk found: the candidate files, and one line for each place it could not read."""

    files: list[Path]
    problems: list[str]


def candidate_files(store: Path, *, skip: Path | None = None, limit_seen: int = 2_000_000) -> Walked:
    """The files under ``store`` a parser may read (transcript suffixes, not opencode's storage
    details, not under a hidden directory but ``.specstory``), sorted; symbolic links are not
    followed (a link loop cannot be entered) and ``skip`` (ccm-tui's own data) is left out.
    A directory that cannot be read is one line in ``problems``."""
    if store.is_file():
        return Walked([store], [])
    files: list[Path] = []
    problems: list[str] = []

    def failed(error: OSError) -> None:
        problems.append(f"{error.filename}: cannot be read ({error.strerror or error})")

    skip_text = str(skip) if skip is not None else None
    for folder, dirs, names in os.walk(store, onerror=failed, followlinks=False):
        if skip_text and (folder == skip_text or folder.startswith(skip_text + os.sep)):
            dirs[:] = []
            continue
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") or d == ".specstory")
        for name in names:
            path = Path(folder) / name
            if path.suffix.lower() not in TRANSCRIPT_SUFFIXES or is_opencode_storage_detail(path):
                continue
            if path.is_symlink():
                continue
            files.append(path)
            if len(files) >= limit_seen:
                problems.append(f"{store}: more than {limit_seen:,} files; the rest are left out")
                return Walked(sorted(files), problems)
    return Walked(sorted(files), problems)


@dataclass(frozen=True)
class AgentSession:
    """What a captured file is: its agent's session, by the agent's own id where it has one."""

    agent: str
    source_id: str
    project: str
    started: str  # ISO date (YYYY-MM-DD)
    resume: str | None

    @property
    def key(self) -> str:
        """``<agent>:<source_id>``: how a capture is found again (and how ``forget`` names one)."""
        return f"{self.agent}:{self.source_id}"


def describe(path: Path, parsed: ParsedTranscript, head: str, mtime: float) -> AgentSession:
    """The agent session ``path`` holds (``head``: its first bytes, decoded; ``mtime``: its time)."""
    agent = AGENT_OF_FORMAT.get(parsed.format, parsed.format)
    source_id, resume = _identity(path, parsed.format)
    return AgentSession(agent, source_id, project_of(path, parsed), _started(head, mtime), resume)


def _identity(path: Path, fmt: str) -> tuple[str, str | None]:
    """The agent's id of the session and the command that resumes it (None: the agent has none)."""
    resolved = str(path.expanduser().absolute())
    fallback = hashlib.sha256(resolved.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    if fmt == "claude-code" and path.suffix == ".jsonl":
        uuid = _UUID.fullmatch(path.stem)
        return (path.stem, f"claude --resume {path.stem}") if uuid else (fallback, None)
    if fmt == "codex":
        found = _UUID.findall(path.stem)
        return (found[-1], f"codex resume {found[-1]}") if found else (fallback, None)
    if fmt == "opencode-storage" and path.stem.startswith("ses_"):
        return path.stem, f"opencode --session {path.stem}"
    if fmt == "cline" and path.parent.name:
        return f"{path.parent.name}", None
    if fmt == "gemini-cli" and path.stem.startswith("session-"):
        return path.stem.removeprefix("session-"), None
    return fallback, None


def project_of(path: Path, parsed: ParsedTranscript) -> str:
    """The project a session was about: its working directory's name, else the nearest folder name
    that is not one of the agents' own (``history``, ``chats`` …); Claude Code's project folder
    (``-home-me-proj``) gives its last part."""
    if parsed.cwd:
        name = Path(parsed.cwd.rstrip("/\\").replace("\\", "/")).name
        if name:
            return name
    for folder in path.parents:
        name = folder.name
        if not name or name in _PLAIN_FOLDERS:
            continue
        if name.startswith("-") and folder.parent.name == "projects":
            return name.rstrip("-").rsplit("-", 1)[-1] or name
        return name
    return ""


def _started(head: str, mtime: float) -> str:
    found = _TIMESTAMP.search(head)
    if found:
        return found.group(1)[:10]
    return datetime.fromtimestamp(mtime, UTC).date().isoformat()


def home() -> Path:
    return Path(os.path.expanduser("~"))


def walk_all(stores: list[Path], skip: Path | None) -> Iterator[tuple[Path, Walked]]:
    for store in stores:
        yield store, candidate_files(store, skip=skip)
