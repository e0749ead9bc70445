"""Log lines of any length, read for what is shown of them: a long line costs its head, not its whole.

A raw log line can be huge: an imported transcript's 60 MB tool dump is one line. A reader
that *shows* messages — the chat's history on open, scrolling back, a page of ``ccm-tui mcp``'s
read, the lines around a search hit — needs a few kilobytes of each. Lines are found here by
scanning bytes for newlines in chunks that double up to a few megabytes (each byte is looked
at once, never copied into a growing buffer), and a line longer than the reader's cap is parsed
from its head — plus the keys after its content, from its last bytes — never whole. Such a
record carries :data:`LINE_BYTES`, the whole line's size, so that what shows it can say how
much is left out. Readers that need whole records (the working context, a copy into another
effort) use the same scanner without a cap: they cost the lines they return, and no more.
"""

from __future__ import annotations

import codecs
import json
import os
import re
import threading
from array import array
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from json.decoder import scanstring  # type: ignore[attr-defined]  # the parser's own string reader
from typing import IO, Any

CHUNK = 65536  # the first read; each next one doubles …
CHUNK_MAX = 4 << 20  # … up to this
SHOW_BYTES = 128 * 1024  # the chat's history parses at most this much of one line …
READ_BYTES = 32 * 1024  # … a read of a few lines (4,000 characters of each shown) this much
TAIL_BYTES = 4096  # bytes at a long line's end read for the keys after its content
LINE_BYTES = "ccm:line_bytes"  # a record read by its head: the whole line's size in bytes
TABLES_KEPT = 32  # logs whose line starts are remembered (the ones read last)
TABLE_TAIL = 64  # bytes before a table's end remembered, to tell an append from a rewrite
TRAILING_TRIES = 16  # quotes tried in a long line's last bytes as the end of its long value

_ESCAPE_AT_END = re.compile(r"(\\+)(u[0-9a-fA-F]{0,3})?$")
_CONTINUATION = bytes(range(0x80, 0xC0))  # UTF-8 bytes that only continue a character


@dataclass(frozen=True)
class LineSpan:
    """Bytes ``start``..``end`` of a file (the newline excluded); ``data``: them, when the scan held
    them in one chunk (else they are read again, as much of them as is wanted)."""

    start: int
    end: int
    data: bytes | None = None
    complete: bool = True  # ended by a newline (the last line of a file may not be)

    @property
    def size(self) -> int:
        return self.end - self.start


def lines_backwards(fh: IO[bytes], end: int | None = None, *, chunk: int = CHUNK) -> Iterator[LineSpan]:
    """The non-empty lines of ``fh`` from its last (the one ending at byte ``end``, a line's start;
    default: the end of the file) towards its first."""
    size = fh.seek(0, os.SEEK_END)
    pos = line_end = size if end is None else min(end, size)
    complete = True
    if pos == size and pos:
        fh.seek(pos - 1)
        complete = fh.read(1) == b"\n"
    while pos > 0:
        step = min(chunk, pos)
        pos -= step
        fh.seek(pos)
        data = fh.read(step)
        chunk = min(chunk * 2, CHUNK_MAX)
        cut = len(data)
        while (nl := data.rfind(b"\n", 0, cut)) >= 0:
            start = pos + nl + 1
            if start < line_end:
                inside = line_end <= pos + len(data)
                yield LineSpan(start, line_end, data[nl + 1 : line_end - pos] if inside else None, complete)
            complete, line_end, cut = True, pos + nl, nl
    if line_end > 0:
        yield LineSpan(0, line_end, None, complete)


def lines_forward(fh: IO[bytes], start: int = 0, *, chunk: int = CHUNK) -> Iterator[LineSpan]:
    """The lines of ``fh`` from byte ``start`` on, empty ones included (they have numbers too); the
    last one not ended by a newline says so (``complete``)."""
    fh.seek(start)
    line_start = pos = start
    while data := fh.read(chunk):
        chunk = min(chunk * 2, CHUNK_MAX)
        at = 0
        while (nl := data.find(b"\n", at)) >= 0:
            inside = line_start >= pos
            yield LineSpan(line_start, pos + nl, data[line_start - pos : nl] if inside else None)
            line_start, at = pos + nl + 1, nl + 1
        pos += len(data)
    if line_start < pos:
        yield LineSpan(line_start, pos, None, complete=False)


@dataclass
class LineTable:
    """Where each line of a log starts (``starts``; the line after the last complete one starts at
    ``end``, and the file may go on past it with a line not ended yet)."""

    stamp: tuple[int, int, int, int]  # (device, inode, size, mtime) of the file the table is of
    starts: array = field(default_factory=lambda: array("q"))
    end: int = 0
    tail: bytes = b""

    def count(self, size: int) -> int:
        """Lines of the file (``size`` bytes): the complete ones and a last one not ended yet."""
        return len(self.starts) + (size > self.end)

    def line(self, number: int, size: int) -> LineSpan:
        """1-based line ``number`` (at most :meth:`count`)."""
        if number <= len(self.starts):
            start = self.starts[number - 1]
            end = self.starts[number] - 1 if number < len(self.starts) else self.end - 1
            return LineSpan(start, end)
        return LineSpan(self.end, size, complete=False)


_tables: OrderedDict[tuple[int, int], LineTable] = OrderedDict()
_tables_guard = threading.Lock()


def line_table(fh: IO[bytes]) -> LineTable:
    """The line starts of the open log ``fh``: scanned once, then remembered for the file (by inode)
    and extended by what was appended since — so that reading a few lines of a log read before costs
    those lines, however long the lines before them (a rewritten or shrunk file is scanned again)."""
    st = os.fstat(fh.fileno())
    key, stamp = (st.st_dev, st.st_ino), (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    with _tables_guard:
        known = _tables.get(key)
        if known is not None:
            _tables.move_to_end(key)
    if known is not None and known.stamp == stamp:
        return known
    table = LineTable(stamp)
    if known is not None and known.end <= st.st_size and _still_there(fh, known):
        table.starts, table.end, table.tail = array("q", known.starts), known.end, known.tail
    _scan_into(fh, table)
    with _tables_guard:
        _tables[key] = table
        while len(_tables) > TABLES_KEPT:
            _tables.popitem(last=False)
    return table


def _still_there(fh: IO[bytes], table: LineTable) -> bool:
    """Whether the bytes a table ends with are still the file's there (it grew by appends only)."""
    size = len(table.tail)
    return os.pread(fh.fileno(), size, table.end - size) == table.tail


def _scan_into(fh: IO[bytes], table: LineTable) -> None:
    """Add the starts of the lines after ``table.end`` (each byte scanned once, in chunks)."""
    fh.seek(table.end)
    pos, chunk, starts = table.end, CHUNK, table.starts
    starts.append(pos)  # the line being scanned (complete once its newline is found)
    while data := fh.read(chunk):
        chunk = min(chunk * 2, CHUNK_MAX)
        at = 0
        while (nl := data.find(b"\n", at)) >= 0:
            starts.append(pos + nl + 1)
            at = nl + 1
        pos += len(data)
    table.end = starts.pop()  # the start of the line after the last complete one
    if table.end:
        size = min(TABLE_TAIL, table.end)
        table.tail = os.pread(fh.fileno(), size, table.end - size)


def parse(raw: bytes) -> Any:
    """One JSONL line as a value (None when it is not JSON)."""
    try:
        return json.loads(raw.decode("utf-8", errors="replace"))
    except (ValueError, RecursionError):  # not JSON, or nested too deep to read: a bad line
        return None


def read_record(fh: IO[bytes], line: LineSpan, cap: int | None = None) -> Any:
    """The value of ``line``: parsed whole, or — longer than ``cap`` bytes — from its head (see
    :func:`head_record`)."""
    if cap is None or line.size <= cap:
        raw = line.data if line.data is not None else os.pread(fh.fileno(), line.size, line.start)
        return parse(raw)
    head = os.pread(fh.fileno(), cap, line.start)
    tail_size = min(TAIL_BYTES, line.size - cap)
    tail = os.pread(fh.fileno(), tail_size, line.end - tail_size)
    return head_record(head, tail, line.size)


def head_record(head: bytes, tail: bytes, size: int) -> dict[str, Any] | None:
    """A JSON object known by its first and last bytes: the members its head holds whole, the one it
    cuts (the content: its start; anything else: left out), the members after it read from ``tail``,
    and :data:`LINE_BYTES`. None when the head is no JSON object."""
    text = codecs.getincrementaldecoder("utf-8")(errors="replace").decode(head)  # a split last character waits
    record = _members(text)
    if record is None:
        return None
    ends = tail.lstrip(_CONTINUATION).decode("utf-8", errors="replace")  # the first character may be split
    for key, value in _trailing_members(ends).items():
        record.setdefault(key, value)
    record[LINE_BYTES] = size
    return record


def _skip_space(text: str, at: int) -> int:
    while at < len(text) and text[at] in " \t\r\n":
        at += 1
    return at


def _members(text: str) -> dict[str, Any] | None:
    """The members of the JSON object ``text`` starts, as far as it goes."""
    at = _skip_space(text, 0)
    if text[at : at + 1] != "{":
        return None
    decoder = json.JSONDecoder()
    out: dict[str, Any] = {}
    at += 1
    while True:
        at = _skip_space(text, at)
        if text[at : at + 1] != '"':
            return out
        try:
            key, at = scanstring(text, at + 1)
        except ValueError:
            return out
        at = _skip_space(text, at)
        if text[at : at + 1] != ":":
            return out
        at = _skip_space(text, at + 1)
        try:
            out[key], at = decoder.raw_decode(text, at)
        except (ValueError, RecursionError):
            if key == "content" and text[at : at + 1] == '"' and (start := _string_start(text[at + 1 :])) is not None:
                out[key] = start  # the text a reader shows: its start (any other value cut is left out)
            return out
        at = _skip_space(text, at)
        if text[at : at + 1] != ",":
            return out
        at += 1


def _string_start(body: str) -> str | None:
    """The text of a JSON string cut before its closing quote (an escape cut in half dropped)."""
    escape = _ESCAPE_AT_END.search(body)
    if escape is not None and len(escape.group(1)) % 2:  # an odd run of backslashes: the last one starts an escape
        body = body[: escape.end(1) - 1]
    try:
        value = json.loads(f'"{body}"')
    except ValueError:
        return None
    return value if isinstance(value, str) else None


def _trailing_members(tail: str) -> dict[str, Any]:
    """The members after a long line's long value, from the line's last bytes: the value is a string
    (the usual case) that ends at an unescaped quote followed by ``,`` — tried from the first such
    quote on, a few times at most (a value of another kind gives nothing)."""
    tries = 0
    at = tail.find('"', 1)
    while at >= 0 and tries < TRAILING_TRIES:
        run = at
        while run > 0 and tail[run - 1] == "\\":
            run -= 1
        if run > 0 and (at - run) % 2 == 0 and tail[at + 1 : at + 2] == ",":
            tries += 1
            try:
                found = json.loads("{" + tail[at + 2 :])
            except (ValueError, RecursionError):
                found = None
            if isinstance(found, dict):
                return found
        at = tail.find('"', at + 1)
    return {}


def cut_size(record: dict[str, Any]) -> int | None:
    """The whole line's size in bytes when ``record`` was read by its head, else None."""
    size = record.get(LINE_BYTES)
    return size if isinstance(size, int) and not isinstance(size, bool) else None


def shown_content(record: dict[str, Any], limit: int | None = None) -> str:
    """A record's text as a reader shows it: at most ``limit`` characters, and — when the text is cut
    here or was read by its head — a last line saying how much of the message is left out."""
    content = record.get("content")
    text = content if isinstance(content, str) else ""
    size = cut_size(record)
    if limit is not None and len(text) > limit:
        left = f"{len(text) - limit:,} more characters" if size is None else f"about {_megabytes(size)} in all"
        return f"{text[:limit]}\n[… the message goes on: {left}; the raw log holds it whole]"
    if size is not None:
        return f"{text}\n[… the message goes on: about {_megabytes(size)} in all; the raw log holds it whole]"
    return text


def _megabytes(size: int) -> str:
    return f"{size / 1_000_000:,.1f} MB" if size >= 100_000 else f"{size:,} bytes"
