"""A scripted, OpenAI-compatible HTTP server on 127.0.0.1 for tests.

Stdlib only, so it can run in-process (``FakeLLMServer``) or as a subprocess::

    python -m tests.helpers.openai_server --port 0 --script FILE.json [--slow-stream 0.2]

The first stdout line is the base URL (``http://127.0.0.1:<port>/v1``).

In-process usage::

    from tests.helpers.openai_server import FakeLLMServer, text, tool_calls, call, fault

    with FakeLLMServer() as server:
        server.push(tool_calls(call("read_file", {"path": "a.txt"})), text("done"))
        resp = await litellm.acompletion(model="openai/fake-model", api_base=server.base_url,
                                         api_key="sk-test-fake", messages=[...], max_retries=0)
        assert server.last_request["messages"][-1]["content"] == ...

Replies are consumed in order, one per chat-completion request.  When the queue
is empty, ``server.responder(body)`` is asked; if there is no responder or it
returns ``None`` the server answers 500 "fake server: no scripted reply left".

Script file schema (JSON): either a list of reply dicts or an object
``{"replies": [...], "fallback": reply-dict}`` (``fallback`` answers every
request once the list is exhausted).  Reply dicts::

    {"type": "text", "content": "hi", "usage": {"prompt_tokens": 3, ...}}
    {"type": "tool_calls", "content": null,
     "calls": [{"name": "f", "arguments": {"a": 1} | "raw string", "id": "call_1"}]}
    {"type": "fault", "status": 429, "body": {...} | "raw" | null, "headers": {"Retry-After": "2"}}
    {"type": "stream_cut", "content": "partial text", "after_chars": 5}
    {"type": "hang", "seconds": 30, "then": reply-dict | null}
    {"type": "endless", "piece": "la "}   (streams forever, whatever max_tokens says)

Transport details: HTTP/1.1 keep-alive; non-stream replies carry
Content-Length; streams use chunked transfer encoding (so a stream cut is seen by
the client as an incomplete body, not as a clean end of stream).
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import json
import signal
import socket
import struct
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = [
    "Call",
    "Endless",
    "FakeLLMServer",
    "Fault",
    "Hang",
    "Reply",
    "StreamCut",
    "Text",
    "ToolCalls",
    "call",
    "endless",
    "fault",
    "hang",
    "reply_from_dict",
    "stream_cut",
    "text",
    "tool_calls",
]

NO_REPLY_MESSAGE = "fake server: no scripted reply left"


def no_tools_message(model: str) -> str:
    """What Ollama answers (HTTP 400) when a request offers tools to a model without tool support."""
    return f"registry.ollama.ai/library/{model}:latest does not support tools"


# --------------------------------------------------------------------------- replies


@dataclass(frozen=True)
class Text:
    content: str
    usage: dict[str, int] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"type": "text", "content": self.content, "usage": self.usage}


@dataclass(frozen=True)
class Call:
    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)
    id: str | None = None

    @property
    def arguments_json(self) -> str:
        """The wire form: a ``str`` is sent verbatim, a dict is JSON-encoded."""
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "arguments": self.arguments, "id": self.id}


@dataclass(frozen=True)
class ToolCalls:
    calls: tuple[Call, ...]
    content: str | None = None
    usage: dict[str, int] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": "tool_calls",
            "calls": [c.to_dict() for c in self.calls],
            "content": self.content,
            "usage": self.usage,
        }


@dataclass(frozen=True)
class Fault:
    status: int
    body: dict[str, Any] | str | None = None
    headers: dict[str, str] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"type": "fault", "status": self.status, "body": self.body, "headers": self.headers}


@dataclass(frozen=True)
class StreamCut:
    content: str
    after_chars: int

    def to_dict(self) -> dict[str, Any]:
        return {"type": "stream_cut", "content": self.content, "after_chars": self.after_chars}


@dataclass(frozen=True)
class Hang:
    seconds: float
    then: Reply | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": "hang",
            "seconds": self.seconds,
            "then": None if self.then is None else self.then.to_dict(),
        }


@dataclass(frozen=True)
class Endless:
    piece: str

    def to_dict(self) -> dict[str, Any]:
        return {"type": "endless", "piece": self.piece}


Reply = Text | ToolCalls | Fault | StreamCut | Hang | Endless
Responder = Callable[[dict[str, Any]], "Reply | Mapping[str, Any] | None"]


def text(content: str, usage: dict[str, int] | None = None) -> Text:
    """A final assistant message (finish_reason "stop")."""
    return Text(content, usage)


def call(name: str, arguments: dict[str, Any] | str | None = None, id: str | None = None) -> Call:
    """One tool call; ``arguments`` as a str is sent verbatim (malformed-JSON tests)."""
    return Call(name, {} if arguments is None else arguments, id)


def tool_calls(*calls: Call, content: str | None = None, usage: dict[str, int] | None = None) -> ToolCalls:
    """An assistant message with one or more tool calls (finish_reason "tool_calls")."""
    if not calls:
        raise ValueError("tool_calls() needs at least one call()")
    return ToolCalls(tuple(calls), content, usage)


def fault(status: int, body: dict[str, Any] | str | None = None, headers: dict[str, str] | None = None) -> Fault:
    """An HTTP error. ``body=None`` gives an OpenAI-style error body for the status."""
    return Fault(status, body, headers)


def stream_cut(content: str, after_chars: int) -> StreamCut:
    """Stream ``content[:after_chars]`` then drop the connection (no final chunk, no [DONE]).

    For a non-stream request the connection is reset without any response.
    """
    return StreamCut(content, after_chars)


def hang(seconds: float, then: Reply | None = None) -> Hang:
    """Sleep ``seconds`` (interrupted by ``stop()``) and then answer ``then``.

    Without ``then`` the answer is a 504 fault ("fake server: hang elapsed").
    If the server is stopped while hanging, the connection is simply closed.
    """
    return Hang(seconds, then)


def endless(piece: str) -> Endless:
    """A streamed reply that never ends: ``piece`` and a count, again and again, whatever ``max_tokens`` says
    (a looping local model), until the client stops reading (the fake's ``endless_pieces`` counts what it sent)."""
    return Endless(piece)


def reply_from_dict(d: Mapping[str, Any] | Reply) -> Reply:
    """Build a reply from its JSON-script form (a reply object passes through)."""
    if isinstance(d, (Text, ToolCalls, Fault, StreamCut, Hang, Endless)):
        return d
    if d.get("type") == "endless":
        return Endless(str(d.get("piece", "la ")))
    kind = d.get("type")
    if kind == "text":
        return Text(d.get("content", ""), d.get("usage"))
    if kind == "tool_calls":
        calls = tuple(call(c["name"], c.get("arguments"), c.get("id")) for c in d["calls"])
        return ToolCalls(calls, d.get("content"), d.get("usage"))
    if kind == "fault":
        return Fault(int(d["status"]), d.get("body"), d.get("headers"))
    if kind == "stream_cut":
        return StreamCut(d.get("content", ""), int(d["after_chars"]))
    if kind == "hang":
        then = d.get("then")
        return Hang(float(d["seconds"]), None if then is None else reply_from_dict(then))
    raise ValueError(f"unknown reply type: {kind!r} in {d!r}")


_ERROR_TYPES = {
    400: ("invalid_request_error", None, "Bad request"),
    401: ("invalid_request_error", "invalid_api_key", "Incorrect API key provided: sk-test-fake."),
    403: ("permission_error", None, "Forbidden"),
    404: (
        "invalid_request_error",
        "model_not_found",
        "The model `{model}` does not exist or you do not have access to it.",
    ),
    429: ("rate_limit_error", "rate_limit_exceeded", "Rate limit reached"),
    500: ("server_error", None, "The server had an error while processing your request."),
    503: ("server_error", None, "The server is overloaded."),
}


def _default_error_body(status: int, model: str) -> dict[str, Any]:
    etype, code, message = _ERROR_TYPES.get(status, ("server_error", None, f"fake server error {status}"))
    return {"error": {"message": message.format(model=model), "type": etype, "param": None, "code": code}}


# --------------------------------------------------------------------------- helpers


def _estimate_tokens(s: str) -> int:
    return max(1, (len(s) + 3) // 4) if s else 0


def _prompt_tokens(body: Mapping[str, Any]) -> int:
    return max(
        1,
        _estimate_tokens(json.dumps(body.get("messages", []))) + _estimate_tokens(json.dumps(body.get("tools") or [])),
    )


def _usage(body: Mapping[str, Any], completion_text: str, given: Mapping[str, int] | None) -> dict[str, int]:
    given = dict(given or {})
    prompt = int(given.get("prompt_tokens", _prompt_tokens(body)))
    completion = int(given.get("completion_tokens", _estimate_tokens(completion_text)))
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": int(given.get("total_tokens", prompt + completion)),
    }


def _pieces(s: str, size: int) -> Iterator[str]:
    size = max(1, size)
    for i in range(0, len(s), size):
        yield s[i : i + size]


class _Abort(Exception):
    """Raised inside the handler to drop the connection (server stopping)."""


# --------------------------------------------------------------------------- server


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    client_address: tuple[str, int] | None = None


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    fake: FakeLLMServer


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HTTPServer
    server_version = "FakeOpenAI/1.0"

    # -- plumbing

    def setup(self) -> None:
        super().setup()
        self.server.fake._track(self.connection, add=True)

    def finish(self) -> None:
        try:
            super().finish()
        except OSError:
            pass
        finally:
            self.server.fake._track(self.connection, add=False)

    def log_message(self, format: str, *args: Any) -> None:
        if self.server.fake.verbose:
            sys.stderr.write("fake-llm: " + (format % args) + "\n")

    def handle_one_request(self) -> None:
        try:
            super().handle_one_request()
        except (_Abort, OSError, ValueError):  # ValueError: I/O on a connection we reset
            self.close_connection = True

    def _received_post(self) -> tuple[str, Any]:
        """The request's path (no query, no trailing slash) and its body (JSON when it parses),
        recorded for the test to inspect."""
        raw = self._read_body()
        try:
            body: Any = json.loads(raw) if raw else {}
        except ValueError:
            body = raw.decode("utf-8", "replace")
        self.server.fake._record(RecordedRequest("POST", self.path, dict(self.headers), body, self.client_address))
        return self.path.split("?")[0].rstrip("/"), body

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            data = bytearray()
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return bytes(data)
                data += self.rfile.read(size)
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _send_json(self, status: int, payload: Any, headers: Mapping[str, str] | None = None) -> None:
        raw = (
            payload
            if isinstance(payload, bytes)
            else (payload.encode() if isinstance(payload, str) else json.dumps(payload).encode())
        )
        self.send_response(status)
        ctype = "application/json" if not isinstance(payload, str) else "text/plain; charset=utf-8"
        hdrs = {"Content-Type": ctype, **(headers or {})}
        for k, v in hdrs.items():
            self.send_header(k, str(v))
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def _cut_stream(self) -> None:
        """End a stream abruptly after what was sent. FIN (not RST), so the client reliably
        receives the partial data before it sees the cut."""
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def _reset_connection(self) -> None:
        """Drop the connection with a TCP RST, without sending a response."""
        self.close_connection = True
        try:
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.rfile.close()
            self.wfile.close()
            self.connection.close()
        except OSError:
            pass

    # -- routing

    def do_GET(self) -> None:
        fake = self.server.fake
        path = self.path.split("?")[0].rstrip("/")
        fake._record(RecordedRequest("GET", self.path, dict(self.headers), None, self.client_address))
        if path in ("/v1/models", "/models"):
            self._send_json(200, {"object": "list", "data": fake.model_entries()})
        else:
            self._send_json(
                404, {"error": {"message": f"fake server: no route GET {path}", "type": "invalid_request_error"}}
            )

    def do_POST(self) -> None:
        fake = self.server.fake
        path, body = self._received_post()
        if path not in ("/v1/chat/completions", "/chat/completions"):
            self._send_json(
                404, {"error": {"message": f"fake server: no route POST {path}", "type": "invalid_request_error"}}
            )
            return
        if not isinstance(body, dict):
            self._send_json(
                400, {"error": {"message": "fake server: body is not a JSON object", "type": "invalid_request_error"}}
            )
            return
        if fake.refuse_tools and body.get("tools"):
            message = no_tools_message(str(body.get("model", "fake-model")))
            self._send_json(400, {"error": {"message": message, "type": "api_error", "param": None, "code": None}})
            return
        self._serve(fake._next_reply(body), body)

    # -- replies

    def _serve(self, reply: Reply, body: dict[str, Any]) -> None:
        fake = self.server.fake
        stream = bool(body.get("stream"))
        model = str(body.get("model", "fake-model"))
        if isinstance(reply, Hang):
            if fake._stopping.wait(reply.seconds):
                raise _Abort()
            then = reply.then or Fault(504, {"error": {"message": "fake server: hang elapsed", "type": "timeout"}})
            self._serve(then, body)
        elif isinstance(reply, Fault):
            payload = reply.body if reply.body is not None else _default_error_body(reply.status, model)
            self._send_json(reply.status, payload, reply.headers)
        elif isinstance(reply, StreamCut):
            if not stream:
                self._reset_connection()
                return
            self._stream_start()
            cid = fake._new_id("chatcmpl")
            self._stream_event(self._chunk(cid, model, {"role": "assistant", "content": ""}, body))
            for piece in _pieces(reply.content[: reply.after_chars], fake.chunk_chars):
                self._stream_pause()
                self._stream_event(self._chunk(cid, model, {"content": piece}, body))
            self._cut_stream()  # no terminating chunk, no [DONE]
        elif isinstance(reply, Endless):
            self._serve_endless(reply, body, model)
        elif isinstance(reply, (Text, ToolCalls)):
            if stream:
                self._serve_stream(reply, body, model)
            else:
                self._send_json(200, self._completion(reply, body, model))
        else:  # pragma: no cover - defensive
            self._send_json(500, {"error": {"message": f"fake server: bad reply {reply!r}", "type": "server_error"}})

    def _message_and_text(self, reply: Text | ToolCalls) -> tuple[dict[str, Any], str, str]:
        if isinstance(reply, Text):
            return {"role": "assistant", "content": reply.content}, reply.content, "stop"
        calls = []
        out_text = reply.content or ""
        for i, c in enumerate(reply.calls):
            calls.append(
                {
                    "id": c.id or f"call_fake_{self.server.fake._next_counter()}_{i}",
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments_json},
                }
            )
            out_text += c.name + c.arguments_json
        return {"role": "assistant", "content": reply.content, "tool_calls": calls}, out_text, "tool_calls"

    def _completion(self, reply: Text | ToolCalls, body: dict[str, Any], model: str) -> dict[str, Any]:
        message, out_text, finish = self._message_and_text(reply)
        message.setdefault("refusal", None)
        return {
            "id": self.server.fake._new_id("chatcmpl"),
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "system_fingerprint": "fp_fake",
            "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
            "usage": _usage(body, out_text, reply.usage),
        }

    def _chunk(
        self, cid: str, model: str, delta: dict[str, Any], body: dict[str, Any], finish: str | None = None
    ) -> dict[str, Any]:
        chunk: dict[str, Any] = {
            "id": cid,
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": model,
            "system_fingerprint": "fp_fake",
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        }
        if _include_usage(body):
            chunk["usage"] = None
        return chunk

    def _serve_stream(self, reply: Text | ToolCalls, body: dict[str, Any], model: str) -> None:
        fake = self.server.fake
        message, out_text, finish = self._message_and_text(reply)
        cid = fake._new_id("chatcmpl")
        n = fake.chunk_chars
        self._stream_start()
        content = message.get("content")
        tcalls = message.get("tool_calls") or []
        self._stream_event(
            self._chunk(cid, model, {"role": "assistant", "content": "" if content or not tcalls else None}, body)
        )
        for piece in _pieces(content or "", n):
            self._stream_pause()
            self._stream_event(self._chunk(cid, model, {"content": piece}, body))
        for index, tc in enumerate(tcalls):
            args = tc["function"]["arguments"]
            head = args[: min(2, len(args))] if len(args) > 4 else ""
            self._stream_pause()
            first = {
                "index": index,
                "id": tc["id"],
                "type": "function",
                "function": {"name": tc["function"]["name"], "arguments": head},
            }
            self._stream_event(self._chunk(cid, model, {"tool_calls": [first]}, body))
            for piece in _pieces(args[len(head) :], n):
                self._stream_pause()
                self._stream_event(
                    self._chunk(cid, model, {"tool_calls": [{"index": index, "function": {"arguments": piece}}]}, body)
                )
        self._stream_pause()
        self._stream_event(self._chunk(cid, model, {}, body, finish=finish))
        if _include_usage(body):
            self._stream_event(
                {
                    "id": cid,
                    "object": "chat.completion.chunk",
                    "created": int(time.time()),
                    "model": model,
                    "system_fingerprint": "fp_fake",
                    "choices": [],
                    "usage": _usage(body, out_text, reply.usage),
                }
            )
        self._write_chunk(b"data: [DONE]\n\n")
        self._write_chunk(b"")  # terminating zero-length chunk

    def _serve_endless(self, reply: Endless, body: dict[str, Any], model: str) -> None:
        fake = self.server.fake
        cid = fake._new_id("chatcmpl")
        self._stream_start()
        self._stream_event(self._chunk(cid, model, {"role": "assistant", "content": ""}, body))
        try:
            while True:  # until the client goes (a write fails) or the server stops
                self._stream_pause()
                said = f"{reply.piece}{fake.endless_pieces} "  # never the same chunk twice (litellm stops a repeat)
                self._stream_event(self._chunk(cid, model, {"content": said}, body))
                fake.endless_pieces += 1
        finally:
            fake.endless_ended.set()

    def _stream_start(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def _stream_pause(self) -> None:
        delay = self.server.fake.stream_delay
        if delay and self.server.fake._stopping.wait(delay):
            raise _Abort()

    def _stream_event(self, obj: dict[str, Any]) -> None:
        self._write_chunk(b"data: " + json.dumps(obj).encode() + b"\n\n")

    def _write_chunk(self, data: bytes) -> None:
        if self.server.fake._stopping.is_set():
            raise _Abort()
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))


def _include_usage(body: Mapping[str, Any]) -> bool:
    opts = body.get("stream_options")
    return isinstance(opts, dict) and bool(opts.get("include_usage"))


class FakeLLMServer:
    """Scripted OpenAI-compatible server on 127.0.0.1 (OS-assigned port by default).

    Attributes tests may set: ``responder`` (fn(body) -> reply | dict | None),
    ``chunk_chars`` (characters per streamed piece, default 3),
    ``stream_delay`` (seconds between stream chunks, default 0), ``verbose``,
    ``refuse_tools`` (answer every request that offers tools with Ollama's 400
    "… does not support tools", consuming no scripted reply).
    """

    handler_class: type[BaseHTTPRequestHandler] = _Handler  # other wire formats subclass both
    chat_path = "/chat/completions"  # what chat_requests() counts

    def __init__(
        self,
        port: int = 0,
        *,
        host: str = "127.0.0.1",
        responder: Responder | None = None,
        chunk_chars: int = 3,
        stream_delay: float = 0.0,
        verbose: bool = False,
        on_request: Callable[[RecordedRequest], None] | None = None,
    ) -> None:
        self._host = host
        self._port = port
        self.responder = responder
        self.chunk_chars = chunk_chars
        self.stream_delay = stream_delay
        self.endless_pieces = 0  # pieces an endless() reply sent before the client stopped reading
        self.endless_ended = threading.Event()  # set when an endless() reply stopped: the client closed it
        self.verbose = verbose
        self.on_request = on_request
        self.refuse_tools = False
        self._lock = threading.Lock()
        self._queue: collections.deque[Reply] = collections.deque()
        self._records: list[RecordedRequest] = []
        self._models: dict[str, None] = {}
        self._model_fields: dict[str, dict[str, Any]] = {}
        self._conns: set[socket.socket] = set()
        self._counter = 0
        self._stopping = threading.Event()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle

    def start(self) -> FakeLLMServer:
        if self._httpd is not None:
            return self
        self._stopping.clear()
        httpd = _HTTPServer((self._host, self._port), self.handler_class)
        httpd.fake = self
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-llm-server", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        self._stopping.set()  # wakes hang() and slow streams
        httpd.shutdown()
        httpd.server_close()
        with self._lock:
            conns = list(self._conns)
        for conn in conns:  # wake handler threads blocked on idle keep-alive reads
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("FakeLLMServer is not started")
        return self._httpd.server_address[1]

    url_path = "/v1"  # what --api-base needs after the host (the Anthropic and Ollama fakes: nothing)

    @property
    def base_url(self) -> str:
        return f"http://{self._host}:{self.port}{self.url_path}"

    # -- scripting

    def push(self, *replies: Reply | Mapping[str, Any]) -> None:
        """Enqueue replies, consumed in order, one per chat-completion request."""
        converted = [reply_from_dict(r) for r in replies]
        with self._lock:
            self._queue.extend(converted)

    @property
    def pending(self) -> int:
        """Number of scripted replies not yet consumed."""
        with self._lock:
            return len(self._queue)

    def clear(self) -> None:
        """Drop queued replies and recorded requests."""
        with self._lock:
            self._queue.clear()
            self._records.clear()

    def _next_reply(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
            responder = self.responder
        if responder is not None:
            try:
                got = responder(body)
            except Exception as exc:  # noqa: BLE001 - surface responder bugs loudly
                return Fault(
                    500, {"error": {"message": f"fake server: responder raised {exc!r}", "type": "server_error"}}
                )
            if got is not None:
                return reply_from_dict(got)
        return Fault(500, {"error": {"message": NO_REPLY_MESSAGE, "type": "server_error", "param": None, "code": None}})

    # -- recording

    def _record(self, rec: RecordedRequest) -> None:
        with self._lock:
            self._records.append(rec)
            if isinstance(rec.body, dict) and isinstance(rec.body.get("model"), str):
                self._models.setdefault(rec.body["model"], None)
        if self.on_request is not None:
            self.on_request(rec)

    @property
    def records(self) -> list[RecordedRequest]:
        """Snapshot of every request (method, path, headers, body)."""
        with self._lock:
            return list(self._records)

    @property
    def requests(self) -> list[Any]:
        """Snapshot of the parsed JSON bodies of all POST requests, in arrival order."""
        with self._lock:
            return [r.body for r in self._records if r.method == "POST"]

    def chat_requests(self) -> list[dict[str, Any]]:
        """Bodies of the chat-completion requests only."""
        with self._lock:
            return [
                r.body
                for r in self._records
                if r.method == "POST" and r.path.split("?")[0].rstrip("/").endswith(self.chat_path)
            ]

    @property
    def last_request(self) -> Any:
        """Body of the most recent POST request (None if there was none)."""
        reqs = self.requests
        return reqs[-1] if reqs else None

    def serve_models(self, *ids: str, **fields: Any) -> None:
        """Models GET /v1/models lists before any request named them, with ``fields`` in each entry
        (what some servers add: vLLM's ``max_model_len``, LM Studio's ``context_length``)."""
        with self._lock:
            for model in ids:
                self._models.setdefault(model, None)
                self._model_fields[model] = dict(fields)

    def models_seen(self) -> list[str]:
        with self._lock:
            return list(self._models)

    def model_entries(self) -> list[dict[str, Any]]:
        """What GET /v1/models lists: an OpenAI model object per model, with its extra fields."""
        with self._lock:
            fields = dict(self._model_fields)
        return [
            {"id": m, "object": "model", "created": 0, "owned_by": "fake", **fields.get(m, {})}
            for m in self.models_seen()
        ]

    # -- internals

    def _next_counter(self) -> int:
        with self._lock:
            self._counter += 1
            return self._counter

    def _new_id(self, prefix: str) -> str:
        return f"{prefix}-fake{self._next_counter()}"

    def _track(self, conn: socket.socket, *, add: bool) -> None:
        with self._lock:
            if add:
                self._conns.add(conn)
            else:
                self._conns.discard(conn)


# --------------------------------------------------------------------------- script mode


def load_script(path: str) -> tuple[list[Reply], Reply | None]:
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    if isinstance(data, list):
        return [reply_from_dict(r) for r in data], None
    replies = [reply_from_dict(r) for r in data.get("replies", [])]
    fb = data.get("fallback")
    return replies, None if fb is None else reply_from_dict(fb)


def main(argv: list[str] | None = None, server_class: type[FakeLLMServer] | None = None) -> int:
    server_class = server_class or FakeLLMServer
    p = argparse.ArgumentParser(prog=f"python -m {server_class.__module__}", description=__doc__.splitlines()[0])
    p.add_argument("--port", type=int, default=0, help="0 = OS-assigned (default)")
    p.add_argument("--script", help="JSON file: list of replies or {replies: [...], fallback: {...}}")
    p.add_argument("--slow-stream", type=float, default=0.0, metavar="SECONDS", help="delay between stream chunks")
    p.add_argument("--chunk-chars", type=int, default=3, help="characters per streamed piece")
    p.add_argument("--record", metavar="FILE", help="append every request (JSON lines) to FILE")
    p.add_argument("--verbose", action="store_true", help="log requests to stderr")
    args = p.parse_args(argv)

    replies, fallback = load_script(args.script) if args.script else ([], None)
    record_lock = threading.Lock()

    def on_request(rec: RecordedRequest) -> None:
        if args.record:
            line = json.dumps(dataclasses.asdict(rec))
            with record_lock, open(args.record, "a", encoding="utf-8") as f:
                f.write(line + "\n")

    server = server_class(
        args.port,
        responder=(lambda _body: fallback) if fallback is not None else None,
        chunk_chars=args.chunk_chars,
        stream_delay=args.slow_stream,
        verbose=args.verbose,
        on_request=on_request,
    )
    server.push(*replies)
    done = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: done.set())
    server.start()
    print(server.base_url, flush=True)
    try:
        while not done.wait(0.5):
            pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
