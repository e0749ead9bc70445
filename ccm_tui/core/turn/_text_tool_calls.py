"""Tool calls a model wrote as text instead of as structured calls.

Many local models answer ``{"name": "open_effort", "arguments": {...}}`` in the
reply (or a fenced JSON block, or Hermes/Qwen ``<tool_call>`` tags) when they
were offered tools. :func:`extract_text_tool_calls` finds those calls — only
for tools that were offered — and returns the prose around them;
:class:`CallHoldback` keeps such text from being streamed to the user while it
arrives, so raw JSON is never shown as the answer.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

MAX_SCANNED_CHARS = 200_000  # replies longer than this are not searched for calls

_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)
_FENCED = re.compile(r"```[ \t]*(?:json|tool_call|tool_code|tool)?[ \t]*\n(.*?)```", re.DOTALL | re.IGNORECASE)
_CALL_KEYS = ("name", "function", "tool_calls", "tool", "type")
_CALL_START = re.compile(
    r"^\s*(?:<tool_call>\s*)?(?:```[ \t]*\w*[ \t]*\n\s*)?\[?\s*\{\s*\"(?:" + "|".join(_CALL_KEYS) + r")\""
)
HOLD_DECIDE_CHARS = 48  # held text longer than this that does not start like a call is released


@dataclass(frozen=True)
class TextToolCall:
    name: str
    arguments: str  # JSON text of an object


def _as_calls(value: Any, offered: set[str]) -> list[TextToolCall] | None:
    """The calls ``value`` describes, or None when it is not (entirely) calls of offered tools."""
    if isinstance(value, dict) and isinstance(value.get("tool_calls"), list):
        value = value["tool_calls"]
    items = value if isinstance(value, list) else [value]
    if not items:
        return None
    calls = []
    for item in items:
        call = _as_call(item, offered)
        if call is None:
            return None
        calls.append(call)
    return calls


def _as_call(item: Any, offered: set[str]) -> TextToolCall | None:
    if not isinstance(item, dict):
        return None
    function = item.get("function")
    if isinstance(function, dict):  # {"function": {"name": ..., "arguments": ...}} (OpenAI's own shape)
        item = function
        name = item.get("name")
    elif isinstance(function, str):  # {"function": "open_effort", "arguments": {...}}
        name = function
    else:
        name = item.get("name", item.get("tool"))
    if not isinstance(name, str) or name not in offered:
        return None
    arguments: Any = next(
        (item[key] for key in ("arguments", "parameters", "args", "input", "tool_input") if key in item), {}
    )
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except (ValueError, RecursionError):
            return None
    if not isinstance(arguments, dict):
        return None
    return TextToolCall(name, json.dumps(arguments, ensure_ascii=False))


def _parse(text: str, offered: set[str]) -> list[TextToolCall] | None:
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return _as_calls(value, offered)


def _tidy(text: str) -> str:
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def extract_text_tool_calls(content: str, offered: set[str]) -> tuple[str, list[TextToolCall]]:
    """The reply without the tool calls written in it, and those calls (in order).

    Recognised: ``<tool_call>{…}</tool_call>`` tags, fenced JSON blocks, and bare JSON
    objects or lists of the shapes ``{"name", "arguments"|"parameters"}``,
    ``{"function": {"name", "arguments"}}`` and ``{"tool_calls": [...]}``. A block that
    names a tool we did not offer stays text.
    """
    if not content or not offered or len(content) > MAX_SCANNED_CHARS or "{" not in content:
        return content, []
    scan = _CallScan(content, offered)
    scan.marked_blocks()
    scan.bare_json()
    return scan.result()


class _CallScan:
    """One reply searched for written calls: the calls found, where they are, which were tagged."""

    def __init__(self, content: str, offered: set[str]) -> None:
        self.content = content
        self.offered = offered
        self.found: list[tuple[int, list[TextToolCall]]] = []
        self.spans: list[tuple[int, int]] = []
        self.tagged: set[int] = set()  # starts of calls inside <tool_call> tags: meant as calls wherever they are

    def _taken(self, start: int, end: int) -> bool:
        return any(start < b and a < end for a, b in self.spans)

    def _add(self, start: int, end: int, calls: list[TextToolCall]) -> None:
        self.found.append((start, calls))
        self.spans.append((start, end))

    def marked_blocks(self) -> None:
        """``<tool_call>`` tags and fenced blocks holding calls."""
        for pattern in (_TAGGED, _FENCED):
            for match in pattern.finditer(self.content):
                if self._taken(match.start(), match.end()):
                    continue
                calls = _parse(match.group(1), self.offered)
                if calls:
                    self._add(match.start(), match.end(), calls)
                    if pattern is _TAGGED:
                        self.tagged.add(match.start())

    def bare_json(self) -> None:
        """JSON values written in the text that are calls; any other JSON value is text, insides too."""
        content, decoder, position = self.content, json.JSONDecoder(), 0
        while True:
            starts = [i for i in (content.find("{", position), content.find("[", position)) if i >= 0]
            if not starts:
                return
            start = min(starts)
            if self._taken(start, start + 1):
                position = next(b for a, b in self.spans if a <= start < b)
                continue
            try:
                value, end = decoder.raw_decode(content, start)
            except (ValueError, RecursionError):  # not JSON, or nested too deep to be a call
                position = start + 1
                continue
            calls = _as_calls(value, self.offered)
            if calls:
                self._add(start, end, calls)
            position = end

    def result(self) -> tuple[str, list[TextToolCall]]:
        content = self.content
        if not self.found:
            return content, []
        found, spans = self.found, self.spans
        outside = "".join(content[a:b] for a, b in _gaps(spans, len(content)))
        if outside.strip():
            # Prose beside a bare or fenced call may be quoting it ("here is an example of open_effort: …"):
            # only tagged calls count then, and the rest stays text as written.
            found = [(start, calls) for start, calls in found if start in self.tagged]
            spans = [(a, b) for a, b in spans if a in self.tagged]
            if not found:
                return content, []
        kept, cursor = [], 0
        for start, end in sorted(spans):
            kept.append(content[cursor:start])
            cursor = end
        kept.append(content[cursor:])
        calls = [call for _, group in sorted(found, key=lambda item: item[0]) for call in group]
        return _tidy("".join(kept)), calls


def _gaps(spans: list[tuple[int, int]], length: int) -> list[tuple[int, int]]:
    """The parts of ``[0, length)`` outside ``spans``."""
    gaps, cursor = [], 0
    for start, end in sorted(spans):
        gaps.append((cursor, start))
        cursor = max(cursor, end)
    gaps.append((cursor, length))
    return gaps


def looks_like_call_start(text: str) -> bool | None:
    """Whether held-back text starts like a tool call: True, False, or None (too short to tell)."""
    if _CALL_START.match(text):
        return True
    return None if len(text.strip()) < HOLD_DECIDE_CHARS else False


# Where a written call may begin: a tag, a fence, a line opening with { or [ (and the reply's start).
_CANDIDATE = re.compile(r"<tool_call|```|\n[ \t]*[\[{]")
_STARTS_LIKE_JSON = re.compile(r"[ \t]*[\[{]")
MAX_JUDGED_CHARS = 4_096  # a candidate still undecided after this much (a flood of spaces) is text


class CallHoldback:
    """Streams a reply's text through, holding back from where a written tool call may begin
    until it is clear whether it is one. ``feed`` returns the text to show now; at the end,
    :meth:`shown` is what the user has seen.

    Linear in the reply: each delta is searched once (with the few characters held before it),
    a candidate is judged on its first :data:`MAX_JUDGED_CHARS` characters at most, and a call
    once recognised is kept as pieces, never re-read. At most :data:`MAX_SCANNED_CHARS` are held:
    past that the reply is not searched for calls (see :func:`extract_text_tool_calls`) and
    everything streams. ``examined`` counts the characters looked at (for tests and benchmarks)."""

    def __init__(self) -> None:
        self._shown: list[str] = []
        self._shown_chars = 0
        self._pending = ""  # not shown yet: a possible marker's start, or a candidate being judged
        self._judging = False  # ``_pending`` starts with a candidate
        self._call: list[str] | None = None  # a recognised call's pieces (held to the end)
        self._call_chars = 0
        self._passing = False  # the reply is past MAX_SCANNED_CHARS: nothing is held any more
        self.examined = 0

    def feed(self, piece: str) -> str:
        if self._passing:
            return self._show(piece)
        if self._call is not None:
            self._call.append(piece)
            self._call_chars += len(piece)
            if self._shown_chars + self._call_chars > MAX_SCANNED_CHARS:
                return self._pass_all()
            return ""
        self._pending += piece
        out = []
        while True:
            if self._judging:
                verdict = self._judge()
                if verdict is None:
                    break
                if verdict:
                    self._call, self._call_chars = [self._pending], len(self._pending)
                    self._pending, self._judging = "", False
                    break
                out.append(self._show(self._pending[:1]))  # not a call: text, and search on after it
                self._pending, self._judging = self._pending[1:], False
            if not self._search(out):
                break
        if self._shown_chars + len(self._pending) > MAX_SCANNED_CHARS:
            out.append(self._pass_all())
        return "".join(out)

    def _search(self, out: list[str]) -> bool:
        """Look for a candidate in the pending text; True when one is found (then judged)."""
        text = self._pending
        self.examined += len(text)
        at_start = self._shown_chars == 0 and len(text) <= MAX_JUDGED_CHARS
        if at_start and (text.strip() == "" or _STARTS_LIKE_JSON.match(text)):
            start = 0 if text.strip() else None  # the reply's start: spaces so far, or a { or [
        else:
            match = _CANDIDATE.search(text)
            start = None if match is None else match.start() + (1 if text[match.start()] == "\n" else 0)
        if start is None:
            keep = len(text) if at_start and text.strip() == "" else _pending_tail(text)
            out.append(self._show(text[: len(text) - keep]))
            self._pending = text[len(text) - keep :]
            return False
        out.append(self._show(text[:start]))
        self._pending, self._judging = text[start:], True
        return True

    def _judge(self) -> bool | None:
        head = self._pending[:MAX_JUDGED_CHARS]
        self.examined += min(len(head), HOLD_DECIDE_CHARS * 4)
        verdict = looks_like_call_start(head)
        if verdict is None and len(self._pending) >= MAX_JUDGED_CHARS:
            return False
        return verdict

    def _show(self, text: str) -> str:
        if text:
            self._shown.append(text)
            self._shown_chars += len(text)
        return text

    def _pass_all(self) -> str:
        """Too long to be searched for calls: show what is held, stream the rest."""
        held = "".join(self._call or []) + self._pending
        self._call, self._call_chars, self._pending, self._judging = None, 0, "", False
        self._passing = True
        return self._show(held)

    @property
    def held_chars(self) -> int:
        return self._call_chars + len(self._pending)

    @property
    def holding(self) -> bool:
        return self.held_chars > 0

    def flush(self) -> str:
        """The end of the stream with no call found: the held text, to show after all."""
        held = "".join(self._call or []) + self._pending
        self._call, self._call_chars, self._pending, self._judging = None, 0, "", False
        return self._show(held)

    @property
    def shown(self) -> str:
        return "".join(self._shown)


def _pending_tail(text: str) -> int:
    """Characters at the end that may be the start of a marker (``<tool_``, a lone backtick, a line
    break followed by spaces)."""
    tail = text[-11:]
    for size in range(min(len(tail), 10), 0, -1):
        end = tail[-size:]
        if "<tool_call".startswith(end) or "```".startswith(end) or end.strip() == "" and "\n" in end:
            return size
    return 0
