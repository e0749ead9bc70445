"""Text from a model or a file, made safe for a terminal.

A reply (or an effort name, a log line, a transcript) may carry escape sequences: ``ESC ]52`` writes
the clipboard, ``ESC ]0`` sets the title, ``ESC [2J`` clears the screen. Whatever prints such text to a
terminal (the commands, the TUI's message bodies) passes it through :func:`terminal_safe` first:
whole sequences go, then every remaining C0/C1 control character (a lone ``ESC`` left by a sequence
split across two stream deltas included). Line breaks and tabs stay; ``\\r\\n`` becomes ``\\n``.
The app's own colours are written by the app, never through here.

Bidirectional formatting characters go too (U+202A–U+202E embeddings and overrides, U+2066–U+2069
isolates, U+200E/U+200F and U+061C marks): they make a terminal show text in another order than it
is stored ("Trojan Source"), so a stored line could show a command, a path or a name that is not the
one there. Dropping them leaves right-to-left text readable (each script keeps its own direction);
the commands, the TUI's messages and every answer of ``ccm-tui mcp`` pass through this one function.

Invisible characters go as well (:data:`INVISIBLE`: the format characters, Unicode category Cf, and
the few fillers that show as nothing): tag characters (U+E0000–E007F) carry words a model reads and no
terminal shows, zero-width spaces and invisible operators hide text inside text. A name (a session's, an
effort's) that holds one is refused (:func:`invisible_in`), not silently changed. The zero-width
(non-)joiners U+200C/U+200D stay: emoji sequences and several scripts (Persian, the Indic ones) need them.
"""

from __future__ import annotations

import re

# OSC (ESC ] or 0x9d) and DCS/SOS/PM/APC strings (ESC P X ^ _, 0x90 0x98 0x9e 0x9f) run up to BEL or ST.
_STRING_START = r"(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])"
_STRING_END = r"(?:\x07|\x1b\\|\x9c)"
_CSI_START = r"(?:\x1b\[|\x9b)"  # CSI: ESC [ (or 0x9b), parameters, intermediates, a final byte


def _sequences(string_stops: str = "") -> re.Pattern[str]:
    """Whole escape sequences: strings (ended early by a character of ``string_stops``), CSI, and the two-
    and three-character escapes (ESC ( B, ESC =, ESC 7 …)."""
    string = _STRING_START + r"[^\x07\x1b\x9c" + string_stops + "]*" + _STRING_END + "?"
    return re.compile("|".join((string, _CSI_START + r"[0-?]*[ -/]*[@-~]?", r"\x1b[ -/]*[0-~]?")))


_SEQUENCES = _sequences()
_CAPTURED_SEQUENCES = _sequences(r"\n")  # in a captured log a string never runs past its line
# A sequence begun and not ended yet (the end of a stream delta): held back until the next one.
_UNFINISHED = re.compile(rf"(?:{_STRING_START}[^\x07\x1b\x9c]*\x1b?|{_CSI_START}[0-?]*[ -/]*|\x1b[ -/]*)\Z")
MAX_HELD = 1024  # an unfinished sequence longer than this is cut (its text shown, cleaned) rather than held
# What is left: C0 but tab and newline, DEL, C1 — and the bidirectional formatting characters.
BIDI_CONTROLS = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
# Category Cf but the joiners (Unicode 15), and the characters shown as nothing (combining grapheme joiner,
# Hangul fillers): a hidden channel to a model, or text that reads as other text.
INVISIBLE = (
    "\u00ad\u034f\u0600-\u0605\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160\u180e\u200b\u2060-\u2064"
    "\u206a-\u206f\u3164\ufeff\uffa0\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f"
)
_INVISIBLE = re.compile(f"[{BIDI_CONTROLS}{INVISIBLE}]")
_CONTROLS = re.compile(f"[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f{BIDI_CONTROLS}{INVISIBLE}]")
# ... in a captured log: the same but the carriage return (resolved) and the bidirectional marks (text).
_CAPTURED_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def terminal_safe(text: str) -> str:
    """``text`` without escape sequences, control, bidirectional formatting or invisible characters
    (``\\n`` and ``\\t`` kept)."""
    if not _CONTROLS.search(text):
        return text
    text = _SEQUENCES.sub("", text).replace("\r\n", "\n")
    return _CONTROLS.sub("", text)


def captured_text(text: str) -> str:
    """Terminal output as captured (``script``, tmux logs, a terminal copied to a file) made the plain text
    the terminal showed, line for line. Escape sequences and C0/C1 controls go as in :func:`terminal_safe`
    (in a capture a C1 character was the terminal's control, not text), but bidirectional marks stay: they
    belong to right-to-left text, and the screen drops them when it shows it. ``\\r\\n`` is a line break;
    a bare ``\\r`` returned the cursor to the start of the line, so what was written after the last one is
    what the line showed (spinners, progress bars: :func:`resolve_overwrites`). The line count is kept."""
    if "\r" not in text and not _CAPTURED_CONTROLS.search(text):
        return text
    text = _CAPTURED_CONTROLS.sub("", _CAPTURED_SEQUENCES.sub("", text).replace("\r\n", "\n"))
    if "\r" in text:
        text = "\n".join(resolve_overwrites(line) for line in text.split("\n"))
    return text


def resolve_overwrites(line: str) -> str:
    """A line written over with ``\\r``: its last part that is not blank."""
    if "\r" not in line:
        return line
    parts = [part for part in line.split("\r") if part.strip()]
    return parts[-1] if parts else ""


def drop_invisible(text: str) -> str:
    """``text`` without :data:`INVISIBLE` and bidirectional formatting characters (what a model reads
    and no one sees); everything else as it is."""
    return _INVISIBLE.sub("", text) if _INVISIBLE.search(text) else text


def invisible_in(name: str) -> str | None:
    """Why ``name`` cannot be a name (one line), or None: a name with a character no one sees could be
    told apart from the name shown by no one (two sessions "work", one with a zero-width space)."""
    found = _INVISIBLE.search(name)
    if found is None:
        return None
    return f"it holds an invisible character (U+{ord(found.group()):04X}); type the name without it"


def clean_name(name: str) -> str:
    """A one-line name (an effort's) as it may be stored and shown: no controls, no line breaks."""
    return " ".join(terminal_safe(name).split())


def json_safe(text: str) -> str:
    """JSON text with DEL, C1 and bidirectional formatting characters written as ``\\u`` escapes
    (``json.dumps`` escapes only C0 with ``ensure_ascii=False``): the same data, nothing a terminal
    acts on."""
    return _CONTROLS.sub(lambda m: _json_escape(m.group()), text)


def _json_escape(char: str) -> str:
    code = ord(char)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000  # a UTF-16 surrogate pair, as JSON writes characters beyond the BMP
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


class StreamCleaner:
    """:func:`terminal_safe` for text that arrives in pieces: a sequence split between two pieces is
    held back (at most :data:`MAX_HELD` characters) and dropped whole, not shown as its tail."""

    def __init__(self) -> None:
        self.held = ""

    def feed(self, piece: str) -> str:
        text = self.held + piece
        self.held = ""
        unfinished = _UNFINISHED.search(text, max(0, len(text) - MAX_HELD))
        if unfinished is not None and unfinished.start() < len(text):
            self.held, text = text[unfinished.start() :], text[: unfinished.start()]
        return terminal_safe(text)

    def flush(self) -> str:
        """The end of the stream: what was held back, cleaned."""
        text, self.held = self.held, ""
        return terminal_safe(text)
