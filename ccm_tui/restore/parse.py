"""Read a transcript file, detect its format and parse it into turn rounds.

Each format is a module of ``ccm_tui.restore.formats`` exposing ``NAME``,
``sniff(head, path) -> float`` and ``parse(text) -> ParsedTranscript``. Adding a
format means writing such a module and listing it in ``_FORMAT_MODULES``.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import replace
from pathlib import Path
from typing import Protocol

from ccm_tui.restore.formats import (
    aider,
    ccm_export,
    chatgpt,
    claude_code,
    claude_code_terminal,
    cline,
    codex,
    gemini_cli,
    gemini_share,
    markdown_chat,
    opencode,
    opencode_export,
    opencode_json,
    opencode_storage,
    specstory,
)
from ccm_tui.restore.sanity import check_parse
from ccm_tui.restore.turns import ParsedTranscript, TranscriptError, UnknownTranscriptFormat


class TranscriptFormat(Protocol):
    """The interface of a format module.

    A module may also offer ``parse_path(path, text)`` when its format spans several files (a
    storage directory beside the one given); it is called instead of ``parse``.
    """

    NAME: str

    def sniff(self, head: str, path: Path) -> float:
        """How sure the module is that ``head`` (the first ~64 KB, decoded) and ``path`` are its
        format: 0 (not it) to 1 (certainly). Never raises: text of any other format gives 0."""
        ...

    def parse(self, text: str) -> ParsedTranscript:
        """The turns of a whole transcript. A record of the wrong shape is skipped and counted in
        ``ParsedTranscript.skipped``, never fatal.

        Raises:
            TranscriptError: the text is not this format at all (for instance not JSON for a
                JSON format), in one line naming what was expected.
        """
        ...


_FORMAT_MODULES: tuple[TranscriptFormat, ...] = (
    aider,
    ccm_export,
    chatgpt,
    claude_code,
    claude_code_terminal,
    cline,
    codex,
    gemini_cli,
    gemini_share,
    markdown_chat,
    opencode,
    opencode_export,
    opencode_json,
    opencode_storage,
    specstory,
)

FORMATS: dict[str, TranscriptFormat] = {module.NAME: module for module in _FORMAT_MODULES}

SNIFF_BYTES = 64 * 1024
MAX_TRANSCRIPT_BYTES = 64 * 2**20  # a 241 MB transcript took 2.77 GB of memory: refused with a clear limit
_MIN_CONFIDENCE = 0.3
_UTF8_BOM = "\ufeff"
_REPLACEMENT = "\ufffd"


def read_transcript_text(path: Path | str) -> tuple[str, list[str]]:
    """Read a transcript as text, tolerating any bytes.

    Invalid UTF-8 is replaced with U+FFFD and NUL bytes are removed; the notes
    list says how many of each (empty when the file was clean).
    """
    data = _read_bytes(Path(path))
    return _decode(data)


def detect_format(path: Path | str) -> str:
    """Name of the most likely format of the transcript at ``path``."""
    path = Path(path)
    head, _ = _decode(_read_bytes(path, SNIFF_BYTES))
    return _detect(head, path)


def parse_transcript(
    path: Path | str, fmt: str = "auto", max_turns: int | None = None, *, max_bytes: int | None = None
) -> ParsedTranscript:
    """Parse the transcript at ``path`` (format ``fmt`` or auto-detected).

    ``max_turns`` keeps only the first N turns; ``max_bytes``: a bigger file is refused (it is read
    whole, at about ten times its size in memory; None: :data:`MAX_TRANSCRIPT_BYTES`).

    Raises:
        TranscriptError: an unreadable or too large file, an unknown format name, a negative
            ``max_turns``, or data the format's parser could not read.
        UnknownTranscriptFormat: ``fmt`` is ``auto`` and no format recognises the file.
    """
    path = Path(path)
    if max_turns is not None and max_turns < 0:
        raise TranscriptError(f"max_turns must be zero or more, not {max_turns}")
    data = _read_bytes(path, max_bytes=max_bytes)
    text, notes = _decode(data)
    name = _detect(text[:SNIFF_BYTES], path) if fmt == "auto" else fmt
    module = FORMATS.get(name)
    if module is None:
        raise TranscriptError(f"unknown transcript format {name!r}; known: auto, {', '.join(sorted(FORMATS))}")
    try:
        parse_path = getattr(module, "parse_path", None)
        parsed = parse_path(path, text) if parse_path is not None else module.parse(text)
    except (TypeError, AttributeError, KeyError, IndexError, RecursionError, ArithmeticError) as error:
        # Parsers skip and count bad records themselves; this is the last line of defence.
        raise TranscriptError(f"cannot parse {path.name} as {name}: unexpected data ({type(error).__name__})") from None
    replaced = _replace_lone_surrogates(parsed)
    if replaced:
        notes.append(
            f"replaced {replaced} escaped character(s) that are not valid Unicode (lone surrogates) with U+FFFD"
        )
    parsed.skipped[:0] = notes
    parsed.sha256 = hashlib.sha256(data).hexdigest()
    parsed.warnings = check_parse(text, name, parsed)
    if max_turns is not None:
        parsed.turns = parsed.turns[:max_turns]
    return parsed


_SURROGATE = re.compile("[\ud800-\udfff]")


def _replace_lone_surrogates(parsed: ParsedTranscript) -> int:
    """Replace lone surrogates (from JSON escapes such as "\\ud83d") with U+FFFD in everything the
    import writes: they cannot be encoded as UTF-8, so one would break the manifest, the search
    index and every later command. Returns how many were replaced."""
    replaced = 0

    def valid(text: str) -> str:
        nonlocal replaced
        fixed, count = _SURROGATE.subn("\ufffd", text)
        replaced += count
        return fixed

    parsed.title = valid(parsed.title) if parsed.title else parsed.title
    parsed.cwd = valid(parsed.cwd) if parsed.cwd else parsed.cwd
    for turn in parsed.turns:
        turn.user_messages = [valid(m) for m in turn.user_messages]
        turn.agent_responses = [valid(m) for m in turn.agent_responses]
        turn.artifacts = [replace(a, path=valid(a.path)) for a in turn.artifacts]
    return replaced


def _read_bytes(path: Path, limit: int = -1, *, max_bytes: int | None = None) -> bytes:
    max_bytes = MAX_TRANSCRIPT_BYTES if max_bytes is None else max_bytes
    try:
        with path.open("rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if limit < 0 and size > max_bytes:
                raise TranscriptError(
                    f"{path.name} is {size / 2**20:,.0f} MiB, over the {max_bytes // 2**20} MiB a "
                    "transcript may have (it is read whole, at about ten times its size in memory): split it"
                )
            return handle.read(limit)
    except OSError as error:
        raise TranscriptError(f"cannot read transcript {path}: {error.strerror or error}") from error


def _decode(data: bytes) -> tuple[str, list[str]]:
    notes: list[str] = []
    nul_count = data.count(b"\x00")
    if nul_count:
        data = data.replace(b"\x00", b"")
        notes.append(f"removed {nul_count} NUL byte(s)")
    text = data.decode("utf-8", errors="replace")
    replaced = text.count(_REPLACEMENT) - data.count(_REPLACEMENT.encode("utf-8"))
    if replaced:
        notes.append(f"replaced {replaced} invalid UTF-8 sequence(s) with U+FFFD")
    return text.removeprefix(_UTF8_BOM), notes


def _detect(head: str, path: Path) -> str:
    scores = {name: module.sniff(head, path) for name, module in FORMATS.items()}
    best = max(scores, key=lambda name: scores[name])
    if scores[best] < _MIN_CONFIDENCE:
        raise UnknownTranscriptFormat(
            f"cannot detect the transcript format of {path.name}; pass --format (one of {', '.join(sorted(FORMATS))})"
        )
    return best
