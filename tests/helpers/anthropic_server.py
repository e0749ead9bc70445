"""A scripted server speaking Anthropic's Messages API (``POST /v1/messages``) on 127.0.0.1.

Same scripting as :mod:`tests.helpers.openai_server` (``push(text(...), tool_calls(...),
fault(...), stream_cut(...), hang(...))``, ``responder``, ``refuse_tools``); only the
wire format differs:

* a reply is a ``message`` object whose ``content`` holds ``text`` and ``tool_use``
  blocks (``input`` is a JSON object), ``stop_reason`` ``end_turn`` or ``tool_use``,
  ``usage`` ``{input_tokens, output_tokens}``;
* ``stream: true`` answers server-sent events: ``message_start``, then per block
  ``content_block_start`` / ``content_block_delta`` (``text_delta`` or
  ``input_json_delta`` with ``partial_json``) / ``content_block_stop``, then
  ``message_delta`` (stop_reason, output usage) and ``message_stop``; a ``ping`` after
  the start, as the real API sends;
* errors are ``{"type": "error", "error": {"type": ..., "message": ...}}``;
* a prompt cache as the API keeps one: every ``cache_control`` breakpoint stores the prefix up to
  it (tools, system blocks, message blocks — the hints themselves aside); a request reads the longest
  stored prefix ending at one of its breakpoints or up to 20 blocks before one, and writes the rest up
  to its last breakpoint. ``usage`` then has ``cache_read_input_tokens`` / ``cache_creation_input_tokens``
  (sizes estimated at 4 characters a token) and ``input_tokens`` is what follows. ``cache_hits``
  records the read counts of each request.

    python -m tests.helpers.anthropic_server --port 0 --script FILE.json
"""

from __future__ import annotations

import json
import sys
from typing import Any

from tests.helpers.openai_server import (
    FakeLLMServer,
    Fault,
    Hang,
    Reply,
    StreamCut,
    Text,
    ToolCalls,
    _Abort,
    _estimate_tokens,
    _Handler,
    _pieces,
    no_tools_message,
)

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


def error_body(status: int, message: str | None = None) -> dict[str, Any]:
    kind = _ERROR_TYPES.get(status, "api_error")
    return {"type": "error", "error": {"type": kind, "message": message or f"fake anthropic: {kind}"}}


class _AnthropicHandler(_Handler):
    server_version = "FakeAnthropic/1.0"

    def do_POST(self) -> None:
        fake = self.server.fake
        path, body = self._received_post()
        if not path.endswith("/v1/messages"):
            self._send_json(404, error_body(404, f"fake anthropic: no route POST {path}"))
            return
        if not isinstance(body, dict):
            self._send_json(400, error_body(400, "fake anthropic: body is not a JSON object"))
            return
        if fake.refuse_tools and body.get("tools"):
            self._send_json(400, error_body(400, no_tools_message(str(body.get("model")))))
            return
        self._serve(fake._next_reply(body), body)

    def _serve(self, reply: Reply, body: dict[str, Any]) -> None:
        fake = self.server.fake
        model = str(body.get("model", "claude-fake"))
        if isinstance(reply, Hang):
            if fake._stopping.wait(reply.seconds):
                raise _Abort()
            self._serve(reply.then or Fault(504, error_body(504, "fake anthropic: hang elapsed")), body)
        elif isinstance(reply, Fault):
            payload = reply.body
            if payload is None or (isinstance(payload, dict) and "type" not in payload):
                message = None
                if isinstance(payload, dict) and isinstance(payload.get("error"), dict):
                    message = payload["error"].get("message")
                payload = error_body(reply.status, message)
            self._send_json(reply.status, payload, reply.headers)
        elif isinstance(reply, StreamCut):
            if not body.get("stream"):
                self._reset_connection()
                return
            self._sse_start()
            self._event("message_start", {"type": "message_start", "message": self._message(model, [], body, None)})
            self._event("content_block_start", _block_start(0, {"type": "text", "text": ""}))
            for piece in _pieces(reply.content[: reply.after_chars], fake.chunk_chars):
                self._stream_pause()
                self._event("content_block_delta", _delta(0, {"type": "text_delta", "text": piece}))
            self._cut_stream()
        elif isinstance(reply, (Text, ToolCalls)):
            blocks = self._blocks(reply)
            if body.get("stream"):
                self._serve_stream(reply, blocks, body, model)
            else:
                stop = "tool_use" if isinstance(reply, ToolCalls) else "end_turn"
                self._send_json(200, self._message(model, blocks, body, stop, reply))

    def _blocks(self, reply: Text | ToolCalls) -> list[dict[str, Any]]:
        if isinstance(reply, Text):
            return [{"type": "text", "text": reply.content}]
        blocks: list[dict[str, Any]] = [{"type": "text", "text": reply.content}] if reply.content else []
        for i, c in enumerate(reply.calls):
            arguments = json.loads(c.arguments_json) if isinstance(c.arguments, dict) else c.arguments
            blocks.append(
                {
                    "type": "tool_use",
                    "id": c.id or f"toolu_fake{self.server.fake._next_counter()}_{i}",
                    "name": c.name,
                    "input": arguments,
                }
            )
        return blocks

    def _usage(
        self, body: dict[str, Any], blocks: list[dict[str, Any]], given: dict[str, int] | None
    ) -> dict[str, int]:
        given = dict(given or {})
        prompt = given.get("prompt_tokens") or max(
            1, _estimate_tokens(json.dumps(body.get("messages", [])) + json.dumps(body.get("system") or ""))
        )
        completion = given.get("completion_tokens") or _estimate_tokens(json.dumps(blocks))
        usage = {"input_tokens": int(prompt), "output_tokens": int(completion)}
        cached = self.server.fake.prompt_cache_usage(body)
        if cached is not None and not given.get("prompt_tokens"):
            read, written, rest = cached
            usage.update(input_tokens=rest, cache_read_input_tokens=read, cache_creation_input_tokens=written)
        return usage

    def _message(
        self,
        model: str,
        blocks: list[dict[str, Any]],
        body: dict[str, Any],
        stop: str | None,
        reply: Text | ToolCalls | None = None,
    ) -> dict[str, Any]:
        usage = self._usage(body, blocks, reply.usage if reply is not None else None)
        if stop is None:  # message_start: output counted in message_delta
            usage["output_tokens"] = 1
        return {
            "id": self.server.fake._new_id("msg"),
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": blocks,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": usage,
        }

    def _serve_stream(self, reply: Text | ToolCalls, blocks: list[dict[str, Any]], body: dict[str, Any], model: str):
        fake = self.server.fake
        self._sse_start()
        self._event("message_start", {"type": "message_start", "message": self._message(model, [], body, None, reply)})
        self._event("ping", {"type": "ping"})
        for index, block in enumerate(blocks):
            self._stream_pause()
            if block["type"] == "text":
                self._event("content_block_start", _block_start(index, {"type": "text", "text": ""}))
                for piece in _pieces(block["text"], fake.chunk_chars):
                    self._stream_pause()
                    self._event("content_block_delta", _delta(index, {"type": "text_delta", "text": piece}))
            else:
                start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
                self._event("content_block_start", _block_start(index, start))
                raw = block["input"] if isinstance(block["input"], str) else json.dumps(block["input"])
                for piece in _pieces(raw, max(fake.chunk_chars, 5)):
                    self._stream_pause()
                    self._event(
                        "content_block_delta", _delta(index, {"type": "input_json_delta", "partial_json": piece})
                    )
            self._event("content_block_stop", {"type": "content_block_stop", "index": index})
        stop = "tool_use" if isinstance(reply, ToolCalls) else "end_turn"
        usage = self._usage(body, blocks, reply.usage)
        self._event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": usage["output_tokens"]},
            },
        )
        self._event("message_stop", {"type": "message_stop"})
        self._write_chunk(b"")

    def _sse_start(self) -> None:
        self._stream_start()

    def _event(self, name: str, data: dict[str, Any]) -> None:
        self._write_chunk(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())


def _block_start(index: int, block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": block}


def _delta(index: int, delta: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": delta}


def _cache_blocks(body: dict[str, Any]) -> list[tuple[str, bool]]:
    """The request as the prompt cache sees it: (block without its hint, whether it carries one), in the
    API's order — tools, system, messages."""
    out: list[tuple[str, bool]] = []

    def add(block: Any, role: str = "") -> None:
        hinted = isinstance(block, dict) and "cache_control" in block
        plain = {k: v for k, v in block.items() if k != "cache_control"} if isinstance(block, dict) else block
        out.append((role + json.dumps(plain, sort_keys=True), hinted))

    for tool in body.get("tools") or []:
        add(tool)
    system = body.get("system") or []
    for block in [system] if isinstance(system, str) else system:
        add(block, "system:")
    for message in body.get("messages") or []:
        content = message.get("content")
        for block in [content] if isinstance(content, str) else content or []:
            add(block, f"{message.get('role')}:")
    return out


class FakeAnthropicServer(FakeLLMServer):
    """Scripted Anthropic Messages API; ``base_url`` is the server root (litellm adds ``/v1/messages``)."""

    handler_class = _AnthropicHandler
    chat_path = "/v1/messages"
    url_path = ""
    LOOKBACK = 20  # blocks before a breakpoint the API looks back for a stored prefix

    def prompt_cache_usage(self, body: dict[str, Any]) -> tuple[int, int, int] | None:
        """(read, written, rest) input tokens of a request with ``cache_control`` hints; None without."""
        blocks = _cache_blocks(body)
        marks = [i for i, (_, hinted) in enumerate(blocks) if hinted]
        if not marks:
            return None
        sizes = [_estimate_tokens(text) for text, _ in blocks]
        keys = [hash(tuple(text for text, _ in blocks[: i + 1])) for i in range(len(blocks))]
        with self._lock:
            store: set[int] = self.__dict__.setdefault("_prompt_cache", set())
            hit = -1
            for mark in marks:
                for i in range(mark, max(-1, mark - self.LOOKBACK), -1):
                    if keys[i] in store:
                        hit = max(hit, i)
                        break
            store.update(keys[i] for i in marks)
            read = sum(sizes[: hit + 1])
            written = sum(sizes[hit + 1 : marks[-1] + 1])
            self.__dict__.setdefault("cache_hits", []).append(read)
        return read, written, sum(sizes[marks[-1] + 1 :])


def main(argv: list[str] | None = None) -> int:
    from tests.helpers import openai_server

    return openai_server.main(argv, server_class=FakeAnthropicServer)


if __name__ == "__main__":
    sys.exit(main())
