"""The floor for a streamed reply: a bare Textual app that sends one chat request to an
OpenAI-compatible server when Enter is pressed in its input, reads the SSE stream itself and writes
each piece into a ``Markdown`` widget through ``Markdown.get_stream()`` (``MarkdownStream``), the
view kept at the bottom. Measured by ``bench_stream.py`` exactly like ccm-tui. Its HTTP client (and TLS
context, ~0.1-0.3 s to make) is made at start, not on Enter: ccm-tui has made its own in a first turn before
it is measured. Not a part of ccm-tui.

    python benchmarks/bare_stream_app.py --api-base http://127.0.0.1:PORT/v1
"""

from __future__ import annotations

import argparse
import json

import httpx
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Footer, Input, Markdown, Static


class BareStream(App[None]):
    BINDINGS = [("ctrl+q", "quit", "Quit")]
    CSS = "VerticalScroll { height: 1fr; } Input { dock: bottom; }"

    def __init__(self, api_base: str) -> None:
        super().__init__()
        self.api_base = api_base.rstrip("/")
        self.client: httpx.AsyncClient | None = None

    def compose(self) -> ComposeResult:
        yield Static("bare stream app ready (of budget)")
        with VerticalScroll():
            yield Markdown("")
        yield Input(placeholder="message")
        yield Footer()

    def on_mount(self) -> None:
        self.client = httpx.AsyncClient(timeout=None)
        self.query_one(VerticalScroll).anchor()
        self.query_one(Input).focus()

    async def on_unmount(self) -> None:
        if self.client is not None:
            await self.client.aclose()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        text = event.value
        event.input.clear()
        self.run_worker(self.ask(text), exclusive=True)

    async def ask(self, text: str) -> None:
        stream = Markdown.get_stream(self.query_one(Markdown))
        body = {"model": "fake-model", "stream": True, "messages": [{"role": "user", "content": text}]}
        headers = {"Authorization": "Bearer sk-bare"}
        assert self.client is not None
        try:
            async with self.client.stream(
                "POST", f"{self.api_base}/chat/completions", json=body, headers=headers
            ) as response:
                async for line in response.aiter_lines():
                    if not line.startswith("data: ") or line == "data: [DONE]":
                        continue
                    for choice in json.loads(line[6:]).get("choices") or []:
                        piece = (choice.get("delta") or {}).get("content")
                        if piece:
                            await stream.write(piece)
        finally:
            await stream.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--api-base", required=True)
    BareStream(parser.parse_args().api_base).run()


if __name__ == "__main__":
    main()
