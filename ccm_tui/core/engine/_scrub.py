"""Taking a text out of one session file, whatever layout holds it (the forget's file work).

Each function reads one file, returns its new bytes (or None when nothing changed) and how many
occurrences it took out; :mod:`.forget` writes them back atomically. A JSONL line is searched in its
decoded strings (a ``\\"``, ``\\n`` or ``\\u00e9`` escape hides nothing), a YAML block in its parsed
values, any other file as text. A string loses the text, not its neighbours; a ``summary`` loses the
sentences that held it (extractively), or the text alone when every sentence held it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from ..manifest.yaml_file import MARK_RE, cut, dump_block, head_bytes, parse_block, parse_yaml
from ..storage.durable import encode_line

_MANIFEST = Path("manifest.yaml")
MARK = "[forgotten]"  # what stands where a forgotten text was (a tombstone's content)
_SENTENCE = re.compile(r"(?<=[.!?;])\s+")
_ALNUM = re.compile(rb"[A-Za-z0-9]{3,}")


@dataclass(frozen=True)
class Needle:
    """The text to forget, and the strings (of another effort's) to take out whole."""

    text: str = ""  # a substring forgotten wherever it is ("" for none)
    whole: frozenset[str] = frozenset()  # strings forgotten where they are a whole value
    drop_keys: frozenset[str] = frozenset()  # mapping keys whose entries go (an effort's id in expanded.json)

    @cached_property
    def pattern(self) -> re.Pattern[str]:
        """The text, its whitespace runs matching any whitespace run (a tab the model's text became a
        space, a line break a summary folded)."""
        parts = [re.escape(p) for p in self.text.split()]
        lead = r"\s+" if self.text[:1].isspace() else ""
        tail = r"\s+" if self.text[-1:].isspace() else ""
        return re.compile(lead + r"\s+".join(parts) + tail if parts else re.escape(self.text))

    def found_in(self, value: str) -> bool:
        return self.pattern.search(value) is not None

    @cached_property
    def words(self) -> frozenset[str]:
        return frozenset(w.casefold() for w in re.findall(r"\w+", self.text))

    @property
    def mark(self) -> str:
        return "" if self.text and self.text in MARK else MARK

    def hint(self) -> bytes | None:
        """Bytes every encoding the session files use keeps literally (a run of ASCII letters and digits:
        JSON and YAML escape only other characters): a line or block without them cannot hold the text.
        None: no such run, read everything."""
        if not self.text or self.whole or self.drop_keys:
            return None
        runs = _ALNUM.findall(self.text.encode("utf-8"))
        return max(runs, key=len) if runs else None

    def variants(self) -> list[bytes]:
        """The text's bytes in the layouts the files use (raw UTF-8, JSON-escaped, ASCII-escaped)."""
        if not self.text:
            return []
        found = {self.text.encode("utf-8")}
        found.add(json.dumps(self.text, ensure_ascii=False)[1:-1].encode("utf-8"))
        found.add(json.dumps(self.text)[1:-1].encode("ascii"))
        return sorted(found)


@dataclass
class Count:
    occurrences: int = 0
    lines: set[int] = field(default_factory=set)


def scrub_string(value: str, needle: Needle, count: Count, *, key: str | None = None) -> str:
    if value in needle.whole:
        count.occurrences += 1
        return MARK
    if not needle.text or not needle.found_in(value):
        return value
    if key == "summary":
        return scrub_summary(value, needle, count)
    n = 0
    for _ in range(100):  # a removal can make a new occurrence ("aab" in "aaabb")
        value, found = needle.pattern.subn(needle.mark, value)
        n += found
        if not found:
            break
    count.occurrences += n
    return value


def scrub_summary(summary: str, needle: Needle, count: Count) -> str:
    """The summary without the sentences that held the text (or without the text, if all did)."""
    sentences = _SENTENCE.split(summary)
    kept = [s for s in sentences if not needle.found_in(s)]
    if kept and len(kept) < len(sentences) and not needle.found_in(" ".join(kept)):
        count.occurrences += len(needle.pattern.findall(summary))
        return " ".join(kept)
    return scrub_string(summary, Needle(text=needle.text), count)


def scrub_terms(terms: list[Any], needle: Needle, count: Count) -> list[Any]:
    """A list of search terms (recall's, on ``turn_start``) without the words of the text."""
    words = needle.words
    kept = [t for t in terms if not (isinstance(t, str) and t.casefold() in words)]
    count.occurrences += len(terms) - len(kept)
    return kept


def scrub_value(value: Any, needle: Needle, count: Count, key: str | None = None) -> Any:
    if isinstance(value, str):
        return scrub_string(value, needle, count, key=key)
    if isinstance(value, list):
        if key == "terms" and needle.text:
            value = scrub_terms(value, needle, count)
        return [scrub_value(v, needle, count) for v in value]
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        for k, v in value.items():
            if isinstance(k, str) and k in needle.drop_keys:
                count.occurrences += 1
                continue
            new_key = scrub_string(k, needle, count) if isinstance(k, str) else k
            out[new_key] = scrub_value(v, needle, count, key=k if isinstance(k, str) else None)
        return out
    return value


def scrub_bytes(data: bytes, needle: Needle, count: Count) -> bytes:
    """Text that is not a JSON record (a torn line, a draft): the text, and its JSON-escaped layouts."""
    if needle.text:
        text = data.decode("utf-8", "surrogateescape")
        new = scrub_string(text, Needle(text=needle.text), count)
        if new != text:
            data = new.encode("utf-8", "surrogateescape")
    for variant in needle.variants():
        if variant and variant in data:
            count.occurrences += data.count(variant)
            data = data.replace(variant, needle.mark.encode("utf-8"))
    for whole in needle.whole:
        for variant in {whole.encode("utf-8"), json.dumps(whole, ensure_ascii=False)[1:-1].encode("utf-8")}:
            if len(variant) >= 8 and variant in data:
                count.occurrences += data.count(variant)
                data = data.replace(variant, MARK.encode("utf-8"))
    return data


LineEdit = Callable[[int, dict[str, Any]], dict[str, Any] | None]


def scrub_jsonl(data: bytes, needle: Needle, count: Count, edit: LineEdit | None = None) -> bytes | None:
    """A JSONL file with each record's strings scrubbed (``edit`` may change a record first: its
    1-based line number and the record; None drops nothing — lines are never removed)."""
    hint = needle.hint()
    out: list[bytes] = []
    changed = False
    for number, line in enumerate(data.splitlines(keepends=True), start=1):
        if edit is None and hint is not None and hint not in line:
            out.append(line)
            continue
        new = _scrub_line(line, needle, count, number, edit)
        if new is not None:
            count.lines.add(number)
            changed = True
            out.append(new)
        else:
            out.append(line)
    return b"".join(out) if changed else None


def _scrub_line(line: bytes, needle: Needle, count: Count, number: int, edit: LineEdit | None) -> bytes | None:
    body = line.rstrip(b"\r\n")
    ending = line[len(body) :]
    try:
        record = json.loads(body)
    except ValueError:  # a torn line, a broken one: its bytes
        new = scrub_bytes(line, needle, count)
        return new if new != line else None
    before = count.occurrences
    if edit is not None and isinstance(record, dict):
        edited = edit(number, record)
        if edited is not None:
            record = edited
            count.occurrences += 1
    record = scrub_value(record, needle, count)
    if count.occurrences == before:
        return None
    try:
        text = encode_line(record) if isinstance(record, dict) else json.dumps(record, ensure_ascii=False) + "\n"
        encoded = text.encode("utf-8")
    except UnicodeEncodeError:
        encoded = (json.dumps(record, separators=(",", ":")) + "\n").encode("ascii")
    return encoded.rstrip(b"\n") + (ending or b"")


def scrub_json(data: bytes, needle: Needle, count: Count) -> bytes | None:
    """A whole JSON file (the snapshots), written back as the session writes it."""
    try:
        value = json.loads(data)
    except ValueError:
        new = scrub_bytes(data, needle, count)
        return new if new != data else None
    before = count.occurrences
    value = scrub_value(value, needle, count)
    if count.occurrences == before:
        return None
    return (json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True) + "\n").encode("utf-8")


def scrub_text(data: bytes, needle: Needle, count: Count) -> bytes | None:
    new = scrub_bytes(data, needle, count)
    return new if new != data else None


def scrub_manifest(
    data: bytes,
    needle: Needle,
    count: Count,
    drop_id: str | None = None,
    journal: list[dict[str, Any]] | None = None,
) -> bytes | None:
    """``manifest.yaml`` without the text (and without the entry ``drop_id``), with the entries
    ``journal`` saved after its mark taken in (a flush), written without a journal mark: a file without
    one includes everything, which stays true whatever ``events.jsonl`` becomes (the forget rewrites it
    next). Returns the new bytes (None: unchanged)."""
    match = MARK_RE.match(data)
    head, blocks = cut(data, match.end() if match else 0)
    hint = needle.hint()
    later = {e["id"]: e for e in journal or () if isinstance(e.get("id"), str)}
    changed_any = bool(later) or match is not None  # (a mark goes: events.jsonl may shrink before it)
    if head is None:  # not in block shape: parsed whole
        parsed = parse_yaml(data.decode("utf-8"), _MANIFEST) if data.strip() else None
        entries = list((parsed or {}).get("efforts") or []) if isinstance(parsed, dict) else []
        blocks = [dump_block(e) for e in entries if isinstance(e, dict)]
        changed_any = True
    new_blocks: list[bytes] = []
    for block in blocks:
        named = [i for i in (*later, drop_id) if i is not None and i.encode("utf-8") in block]
        quick = not named and hint is not None and hint not in block
        entry = None if quick else parse_block(block, _MANIFEST)
        if entry is None:
            new_blocks.append(block if quick else scrub_bytes(block, needle, count))
            changed_any = changed_any or new_blocks[-1] != block
            continue
        entry = later.pop(entry.get("id"), entry)
        new_blocks.append(_scrubbed_block(entry, block, needle, count, drop_id))
        changed_any = changed_any or new_blocks[-1] != block
    for entry in later.values():  # efforts made since the file was written
        new_blocks.append(_scrubbed_block(entry, b"", needle, count, drop_id))
    if not changed_any:
        return None
    return head_bytes(None, not any(new_blocks)) + b"".join(new_blocks)


def _scrubbed_block(entry: dict[str, Any], block: bytes, needle: Needle, count: Count, drop_id: str | None) -> bytes:
    if drop_id is not None and entry.get("id") == drop_id:
        count.occurrences += 1
        return b""
    before = count.occurrences
    scrubbed = scrub_value(entry, needle, count)
    return dump_block(scrubbed) if count.occurrences != before or not block else block
