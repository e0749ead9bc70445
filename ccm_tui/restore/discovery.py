"""Which files an import is about: the transcripts named by files, directories and globs.

A directory is searched recursively for files with a transcript suffix
(:data:`TRANSCRIPT_SUFFIXES`), leaving out hidden directories, symlinks and the
files of opencode's storage that are not sessions (their messages and parts are
read with the session file; project, diff and todo records are no transcripts).
A glob is expanded the same way. Files named as such are taken as given, whatever
their suffix: the parser decides whether they are transcripts.
"""

from __future__ import annotations

import glob
from pathlib import Path

from ccm_tui.restore.turns import TranscriptError

from ..errors import NotFound

TRANSCRIPT_SUFFIXES = frozenset({".jsonl", ".json", ".md", ".markdown", ".log", ".txt"})

# The folders of opencode's storage (``storage/<folder>/…``) that hold no session files.
OPENCODE_STORAGE_DETAILS = frozenset({"message", "part", "project", "session_diff", "todo"})


class NoTranscriptFound(TranscriptError, NotFound):
    """A file, directory or glob named on the command line names no transcript at all."""


def names_a_search(argument: str) -> bool:
    """Whether ``argument`` is a directory or a glob to expand (not one file, existing or not)."""
    path = Path(argument).expanduser()
    return path.is_dir() or (not path.exists() and glob.has_magic(argument))


def single_transcript(arguments: list[str]) -> Path | None:
    """The one file the arguments name, when they name exactly one file (no directory, no glob);
    else None: the arguments are a search (:func:`expand_transcripts`)."""
    if len(arguments) == 1 and not names_a_search(arguments[0]):
        return Path(arguments[0]).expanduser()
    return None


def expand_transcripts(arguments: list[str]) -> list[Path]:
    """The files named by the arguments: files as given, directories searched (hidden ones
    left out), globs expanded; in order, each file once. A name matching nothing raises
    :class:`NoTranscriptFound`."""
    found: list[Path] = []
    for argument in arguments:
        matches = _matches(argument)
        if not matches:
            raise NoTranscriptFound(f"no transcript found at {argument}")
        found.extend(matches)
    return list(dict.fromkeys(found))


def _matches(argument: str) -> list[Path]:
    path = Path(argument).expanduser()
    if path.is_dir():
        return files_under(path)
    if path.exists() or not glob.has_magic(argument):
        return [path]
    matches: list[Path] = []
    for name in sorted(glob.glob(str(path), recursive=True)):
        candidate = Path(name)
        matches.extend(files_under(candidate) if candidate.is_dir() else [candidate])
    return matches


def is_opencode_storage_detail(path: Path) -> bool:
    """A file of opencode's storage that is not a session: its messages and parts (read with their
    session file), and its project, diff and todo records."""
    parts = path.parts
    return any(parts[i] == "storage" and parts[i + 1] in OPENCODE_STORAGE_DETAILS for i in range(len(parts) - 1))


def files_under(directory: Path) -> list[Path]:
    """The transcript candidates under ``directory``, sorted: files with a transcript suffix, not in
    a hidden directory, not symlinks, not opencode storage details."""
    files = []
    for path in sorted(directory.rglob("*")):
        relative = path.relative_to(directory).parts
        if any(part.startswith(".") for part in relative[:-1]) or path.is_symlink() or is_opencode_storage_detail(path):
            continue
        if path.is_file() and path.suffix.lower() in TRANSCRIPT_SUFFIXES:
            files.append(path)
    return files
