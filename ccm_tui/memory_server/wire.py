"""A line on stdin that is not a JSON-RPC message gets a JSON-RPC error back, never silence.

The SDK's stdio transport turns a line it cannot read (not JSON, a lone surrogate escape,
JSON that is no JSON-RPC message) into an exception on the server's read stream, and the
server drops it: a client waiting on that request would wait forever. :class:`Answering`
stands between the transport and the server. It passes every message through, and
answers each unreadable line itself on the transport's own write stream (so frames are
never interleaved and stdout carries JSON-RPC only): ``-32700`` (parse error) for a line
that is not JSON, ``-32600`` (invalid request) for JSON that is not a JSON-RPC message —
with the request's id when the line yields one (Python's parser reads a lone surrogate
that the SDK's refuses), else ``null`` as JSON-RPC 2.0 says. Blank lines are skipped.

A request whose ``id`` is no string or integer (a float, ``true``, an object, an array, ``null``)
is one more kind of unreadable line: the SDK would read it as a notification (it ignores the id)
and never answer. :class:`CheckedLines` sits before the SDK's reader (the server reads stdin
through it, from a private copy of descriptor 0, as the SDK itself does) and turns such a line into
one the SDK refuses, which :func:`error_reply` answers with ``-32600`` and id ``null``. So every line
gets exactly one answer, or none when it is a notification (no ``id`` at all) or blank.

Every message the server writes passes through :class:`Cleaning`: each string in it but the request
id it answers goes through the same cleaning as the command line's output
(:func:`~ccm_tui.core.text.terminal.terminal_safe`), so no answer carries an escape sequence, a C1
control or a bidirectional override from a stored transcript, a file or a caller's own arguments — an
agent printing tool results never has its clipboard, title or screen written.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sys
from collections.abc import Iterator
from io import TextIOWrapper
from types import TracebackType
from typing import IO, Any

import anyio
from mcp.shared.message import SessionMessage
from mcp.types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError
from pydantic import ValidationError

from ..core.api import terminal_safe

log = logging.getLogger(__name__)

Item = SessionMessage | Exception
NOT_JSON = "Parse error: the line is not valid JSON"
SURROGATE = (
    "Parse error: the line holds a lone UTF-16 surrogate escape (a \\ud800-\\udfff escape that is not half of a "
    "pair), which is not Unicode text; send the character itself or its full pair"
)
NOT_A_MESSAGE = (
    'Invalid Request: the line is JSON but not a JSON-RPC 2.0 message (a request is an object with "jsonrpc": '
    '"2.0", an "id" (a string or an integer), a "method" string and optional object "params")'
)


BAD_ID = "ccm-tui: a request id that is no string or integer"  # the key of a line turned into an unreadable one
NOT_AN_ID = (
    'Invalid Request: a request\'s "id" must be a string or an integer (got {given}); a message without an "id" '
    "is a notification, which gets no answer"
)


def _valid_id(value: Any) -> bool:
    return isinstance(value, str | int) and not isinstance(value, bool)


def checked_line(line: str) -> str:
    """``line`` as the SDK may read it: a request (a ``method`` and an ``id``) whose id is no string or
    integer becomes an object the SDK refuses, carrying the id for :func:`error_reply` to name."""
    if '"' not in line or ("method" not in line and "\\u" not in line):
        return line
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        return line
    if isinstance(value, dict) and "method" in value and "id" in value and not _valid_id(value["id"]):
        return json.dumps({BAD_ID: value["id"]}) + "\n"
    return line


class CheckedLines:
    """The wire's lines as the SDK's stdin reader iterates them, each passed through :func:`checked_line`."""

    def __init__(self, file: Any) -> None:
        self._file = file

    def __aiter__(self) -> CheckedLines:
        return self

    async def __anext__(self) -> str:
        line = await self._file.readline()
        if not line:
            raise StopAsyncIteration
        return checked_line(line)


@contextlib.contextmanager
def wire_stdin() -> Iterator[IO[str]]:
    """The wire's stdin as text, read from a private copy of descriptor 0 while 0 points at the null
    device (as the SDK claims it: a handler or a child process reading stdin gets end of file)."""
    try:
        if sys.stdin is None or sys.stdin.buffer.fileno() != 0:
            raise OSError("stdin is not descriptor 0")
        import fcntl

        private = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    except (AttributeError, ImportError, OSError, ValueError):
        yield TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace")
        return
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
    finally:
        os.close(null)
    try:  # never closed: a reading thread may still wait on it after serving ends
        yield TextIOWrapper(os.fdopen(private, "rb", closefd=False), encoding="utf-8", errors="replace")
    finally:
        with contextlib.suppress(OSError):
            os.dup2(private, 0)


def cleaned(value: Any) -> Any:
    """``value`` (JSON data) with every string, keys included, passed through :func:`terminal_safe`."""
    if isinstance(value, str):
        return terminal_safe(value)
    if isinstance(value, list):
        return [cleaned(v) for v in value]
    if isinstance(value, dict):
        return {terminal_safe(k) if isinstance(k, str) else k: cleaned(v) for k, v in value.items()}
    return value


def clean_message(item: SessionMessage) -> SessionMessage:
    """A message to write, its text cleaned (its ``id`` kept as the request gave it)."""
    message = item.message
    data = message.model_dump(by_alias=True, exclude_unset=True, mode="json")
    clean = {k: (v if k == "id" else cleaned(v)) for k, v in data.items()}
    if clean == data:
        return item
    return SessionMessage(type(message).model_validate(clean), metadata=item.metadata)


class Cleaning:
    """The transport's write stream as the server writes to it: each message cleaned (see the module doc)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    async def send(self, item: SessionMessage) -> None:
        await self._inner.send(clean_message(item))

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> Cleaning:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


def _request_id(value: Any) -> str | int | None:
    """The id of a parsed line, when it has a usable one."""
    if not isinstance(value, dict):
        return None
    given = value.get("id")
    return given if isinstance(given, str | int) and not isinstance(given, bool) else None


def _whole(error: ValidationError) -> tuple[bool, Any]:
    """(whether the line was JSON at all, the line as Python's json reads it — None when unreadable)."""
    issues = error.errors()
    for issue in issues:
        if issue.get("type") == "json_invalid":
            raw = issue.get("input")
            try:
                return False, json.loads(raw) if isinstance(raw, str | bytes) else None
            except (ValueError, RecursionError):
                return False, None
    for issue in issues:  # JSON, but no message: an issue about a missing field carries the whole object
        if issue.get("type") == "missing" and len(issue.get("loc", ())) == 2:
            return True, issue.get("input")
    return True, None


def _shown(value: Any) -> str:
    """A value as JSON, cut (what the caller sent as an id)."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:39] + "…"


def _has_surrogate(value: Any) -> bool:
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    except (ValueError, RecursionError):
        return False
    return False


def _blank(error: ValidationError) -> bool:
    return any(
        issue.get("type") == "json_invalid" and isinstance(issue.get("input"), str) and not issue["input"].strip()
        for issue in error.errors()
    )


def error_reply(error: Exception) -> SessionMessage | None:
    """The JSON-RPC error answering an unreadable line (None: nothing to answer — a blank line, or an
    exception that is not about a line)."""
    if not isinstance(error, ValidationError) or _blank(error):
        return None
    was_json, value = _whole(error)
    if was_json and isinstance(value, dict) and BAD_ID in value:
        given = _shown(value[BAD_ID])
        code, message, value = INVALID_REQUEST, NOT_AN_ID.format(given=given), None
    elif was_json:
        code, message = INVALID_REQUEST, NOT_A_MESSAGE
    elif value is not None and _has_surrogate(value):
        code, message = PARSE_ERROR, SURROGATE
    else:
        said = next((str(i.get("msg", "")) for i in error.errors() if i.get("type") == "json_invalid"), "")
        code, message = PARSE_ERROR, f"{NOT_JSON} ({said})" if said else NOT_JSON
    try:
        reply = JSONRPCError(jsonrpc="2.0", id=_request_id(value), error=ErrorData(code=code, message=message))
    except ValidationError:
        reply = JSONRPCError(jsonrpc="2.0", id=None, error=ErrorData(code=code, message=message))
    return SessionMessage(reply)


class Answering:
    """The transport's read stream as the server reads it, answering the lines it cannot read (see the
    module doc). It holds no task of its own: the answer is sent from the server's read loop."""

    def __init__(self, inner: Any, write: Any) -> None:
        self._inner = inner
        self._write = write

    @property
    def last_context(self) -> Any:  # the SDK carries each message's sender context through this
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Item:
        while True:
            item: Item = await self._inner.receive()
            if not isinstance(item, Exception):
                return item
            reply = error_reply(item)
            if reply is None:
                if not isinstance(item, ValidationError):
                    return item  # not about a line: the server's own handling
                continue
            log.debug("answered an unreadable line: %s", reply.message)
            try:
                await self._write.send(reply)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                return item

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> Answering:
        return self

    async def __anext__(self) -> Item:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> Answering:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()
