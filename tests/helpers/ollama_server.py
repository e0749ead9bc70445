"""A scripted server speaking Ollama's native chat API (``POST /api/chat``) on 127.0.0.1.

Same scripting as :mod:`tests.helpers.openai_server`; the wire format is Ollama's:

* the reply is ``{"model", "created_at", "message": {"role": "assistant", "content",
  "tool_calls": [{"function": {"name", "arguments": {...}}}]}, "done": true,
  "done_reason": "stop", "prompt_eval_count", "eval_count", …}`` (tool arguments are a
  JSON object, calls carry no id);
* streaming is the default (``"stream": false`` turns it off) and is newline-delimited
  JSON: one object per piece with ``"done": false``, then a last one with ``"done": true``
  and the counts;
* errors are ``{"error": "message"}``; ``refuse_tools`` answers a request with tools
  the way Ollama does for a model without tool support (400 "… does not support tools");
* ``POST /api/show`` answers a minimal model description (litellm may ask for it); the models
  ``serve_models`` names are listed at ``GET /api/tags`` and ``GET /v1/models``.

    python -m tests.helpers.ollama_server --port 0 --script FILE.json
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

from tests.helpers.openai_server import (
    FakeLLMServer,
    Fault,
    Hang,
    RecordedRequest,
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


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S.000000000Z", time.gmtime())


class _OllamaHandler(_Handler):
    server_version = "FakeOllama/1.0"

    def do_GET(self) -> None:
        """Ollama lists its models at ``/api/tags`` and, OpenAI-style, at ``/v1/models`` (not ``/models``)."""
        fake = self.server.fake
        path = self.path.split("?")[0].rstrip("/")
        fake._record(RecordedRequest("GET", self.path, dict(self.headers), None, self.client_address))
        if path == "/v1/models":
            self._send_json(200, {"object": "list", "data": fake.model_entries()})
        elif path == "/api/tags":
            self._send_json(200, {"models": [{"name": m, "model": m} for m in fake.models_seen()]})
        else:
            self._send_json(404, {"error": f"fake ollama: no route GET {path}"})

    def do_POST(self) -> None:
        fake = self.server.fake
        path, body = self._received_post()
        if path == "/api/show":
            self._send_json(200, {"details": {"family": "fake"}, "model_info": {}, "capabilities": ["completion"]})
            return
        if path != "/api/chat":
            self._send_json(404, {"error": f"fake ollama: no route POST {path}"})
            return
        if not isinstance(body, dict):
            self._send_json(400, {"error": "fake ollama: body is not a JSON object"})
            return
        if fake.refuse_tools and body.get("tools"):
            self._send_json(400, {"error": no_tools_message(str(body.get("model")))})
            return
        self._serve(fake._next_reply(body), body)

    def _serve(self, reply: Reply, body: dict[str, Any]) -> None:
        fake = self.server.fake
        model = str(body.get("model", "fake"))
        stream = body.get("stream", True) is not False
        if isinstance(reply, Hang):
            if fake._stopping.wait(reply.seconds):
                raise _Abort()
            self._serve(reply.then or Fault(504, {"error": "fake ollama: hang elapsed"}), body)
        elif isinstance(reply, Fault):
            payload = reply.body
            if payload is None:
                payload = {"error": f"fake ollama: error {reply.status}"}
            elif isinstance(payload, dict) and isinstance(payload.get("error"), dict):
                payload = {"error": payload["error"].get("message") or "fake ollama: error"}
            self._send_json(reply.status, payload, reply.headers)
        elif isinstance(reply, StreamCut):
            if not stream:
                self._reset_connection()
                return
            self._ndjson_start()
            for piece in _pieces(reply.content[: reply.after_chars], fake.chunk_chars):
                self._stream_pause()
                self._line(self._chunk(model, {"role": "assistant", "content": piece}))
            self._cut_stream()
        elif isinstance(reply, (Text, ToolCalls)):
            content = reply.content or ""
            calls = [] if isinstance(reply, Text) else self._calls(reply)
            if not stream:
                message: dict[str, Any] = {"role": "assistant", "content": content}
                if calls:
                    message["tool_calls"] = calls
                self._send_json(200, self._final(model, message, body, content, calls, reply.usage))
                return
            self._ndjson_start()
            for piece in _pieces(content, fake.chunk_chars):
                self._stream_pause()
                self._line(self._chunk(model, {"role": "assistant", "content": piece}))
            if calls:  # Ollama sends the calls whole, in one chunk
                self._stream_pause()
                self._line(self._chunk(model, {"role": "assistant", "content": "", "tool_calls": calls}))
            self._line(self._final(model, {"role": "assistant", "content": ""}, body, content, calls, reply.usage))
            self._write_chunk(b"")

    def _calls(self, reply: ToolCalls) -> list[dict[str, Any]]:
        out = []
        for c in reply.calls:
            arguments = json.loads(c.arguments_json) if isinstance(c.arguments, dict) else c.arguments
            out.append({"function": {"name": c.name, "arguments": arguments}})
        return out

    def _chunk(self, model: str, message: dict[str, Any]) -> dict[str, Any]:
        return {"model": model, "created_at": _now(), "message": message, "done": False}

    def _final(
        self,
        model: str,
        message: dict[str, Any],
        body: dict[str, Any],
        content: str,
        calls: list[dict[str, Any]],
        usage: dict[str, int] | None,
    ) -> dict[str, Any]:
        usage = dict(usage or {})
        prompt = usage.get("prompt_tokens") or max(1, _estimate_tokens(json.dumps(body.get("messages", []))))
        output = usage.get("completion_tokens") or _estimate_tokens(content + json.dumps(calls))
        return {
            "model": model,
            "created_at": _now(),
            "message": message,
            "done_reason": "stop",
            "done": True,
            "total_duration": 1_000_000,
            "load_duration": 1_000,
            "prompt_eval_count": int(prompt),
            "prompt_eval_duration": 1_000,
            "eval_count": int(output),
            "eval_duration": 1_000,
        }

    def _ndjson_start(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def _line(self, obj: dict[str, Any]) -> None:
        self._write_chunk(json.dumps(obj).encode() + b"\n")


class FakeOllamaServer(FakeLLMServer):
    """Scripted Ollama ``/api/chat``; ``base_url`` is the server root, as ``--api-base`` takes it."""

    handler_class = _OllamaHandler
    chat_path = "/api/chat"
    url_path = ""


def main(argv: list[str] | None = None) -> int:
    from tests.helpers import openai_server

    return openai_server.main(argv, server_class=FakeOllamaServer)


if __name__ == "__main__":
    sys.exit(main())
