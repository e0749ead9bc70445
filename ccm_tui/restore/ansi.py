"""Turn captured terminal output (``script``, tmux logs) back into plain text."""

from __future__ import annotations

import re

# OSC: ESC ] ... terminated by BEL or ST (ESC \); also the 8-bit form 0x9d.
_OSC = r"(?:\x1b\]|\x9d)[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
# CSI: ESC [ params intermediates final; also the 8-bit form 0x9b.
_CSI = r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"
# DCS/SOS/PM/APC strings: ESC P|X|^|_ ... ST.
_STRING_COMMAND = r"\x1b[PX^_][^\x1b]*(?:\x1b\\)?"
# Charset selection (ESC ( B) and other two-character escapes (ESC =, ESC 7, ...).
_SHORT_ESCAPE = r"\x1b[()*+][0-9A-Za-z]|\x1b[ -~]"
_ESCAPES = re.compile("|".join((_OSC, _CSI, _STRING_COMMAND, _SHORT_ESCAPE)))
# Control characters that carry no text once escapes are gone (keeps \t, \n, \r).
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def strip_ansi(text: str) -> str:
    """Remove CSI/OSC escape sequences and resolve carriage-return overwrites.

    ``\\r\\n`` is a line break; a bare ``\\r`` returns the cursor to column 0, so
    only the text written after the last one survives (spinners, progress bars).
    The number of lines is preserved.
    """
    if "\x1b" not in text and "\r" not in text and "\x9b" not in text and "\x9d" not in text:
        return _CONTROL.sub("", text)
    text = _ESCAPES.sub("", text).replace("\r\n", "\n")
    text = _CONTROL.sub("", text)
    if "\r" in text:
        text = "\n".join(_resolve_carriage_returns(line) for line in text.split("\n"))
    return text


def _resolve_carriage_returns(line: str) -> str:
    """Keep the last non-empty segment of a line overwritten with ``\\r``."""
    if "\r" not in line:
        return line
    segments = [segment for segment in line.split("\r") if segment.strip()]
    return segments[-1] if segments else ""
