"""Tokens a local llama.cpp model re-evaluates per turn: ccm-tui's requests against the same chat sent naively.

    # 1. with the project's environment: replay a transcript, write both sides' requests
    python benchmarks/bench_prefix_cache.py dump [--transcript FILE] [--turns N] [--budget B] -o requests.json
    # 2. with llama-cpp-python (its own venv: ~/.cache/llama-venv), measure them on a GGUF model, either
    #    through llama.cpp's OpenAI-compatible server (started here, once per side, on --port) ...
    ~/.cache/llama-venv/bin/python benchmarks/bench_prefix_cache.py server requests.json --model SMOLLM2.gguf
    #    ... or in-process (one ``Llama`` per side)
    ~/.cache/llama-venv/bin/python benchmarks/bench_prefix_cache.py measure requests.json --model SMOLLM2.gguf

Step 1 replays the transcript through the real engine (the replay model stands in for the chat model, as
``ccm-tui replay`` does) and records every chat request ccm-tui sends, and the request a naive chat would send
each turn (the system prompt, the whole conversation so far, the new message). Step 2 renders each request
with the ChatML template (SmolLM2's), tokenizes it with the model, and evaluates it with llama.cpp
(``max_tokens=1``), one ``Llama`` per side so each keeps its own KV cache, as a server slot does: llama.cpp
re-evaluates only what follows the longest prefix shared with the previous prompt. Printed per turn and in
total: tokens re-evaluated and seconds, ccm against naive, and their ratio (same run, same machine).

``server`` is the real thing: ``python -m llama_cpp.server --model GGUF --port P`` (one slot, its KV cache
kept between requests), started afresh for each side so neither inherits the other's cache; each request
goes to ``/v1/chat/completions`` as ccm-tui would send it (the server applies the model's chat template;
tool calls and tool results as text, the same for both sides), ``max_tokens=1``. What the server
reports is read back: ``usage.prompt_tokens`` (the whole prompt) and, from its log (``--verbose``), the
tokens its prompt evaluation processed (``prompt eval time = … / N tokens``: what followed the prefix
it kept) — the figure compared. Seconds are the client's wall time per request (a loaded machine makes
them noisy; the token counts are not).

This is a benchmark, never a test: it needs the model and takes minutes.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = Path(os.environ.get("CCM_CORPUS", "/work/shared/corpus")) / "claude-code-jsonl" / "m-claude_f551142a.jsonl"


def dump(args: argparse.Namespace) -> int:
    """Replay, recording ccm's requests and building the naive ones (project environment)."""
    import asyncio

    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ["CCM_TOKEN_BUDGET"] = str(args.budget)
    from ccm_tui import paths
    from ccm_tui.config import Settings
    from ccm_tui.core.turn.orchestrator import clean_user_text
    from ccm_tui.replay import choose_spans
    from ccm_tui.replay.model import ReplayModel
    from ccm_tui.replay.runner import replay
    from ccm_tui.restore.parse import parse_transcript

    parsed = parse_transcript(args.transcript, "auto")
    parsed.turns = parsed.turns[: args.turns]
    turns: list[dict] = []
    original = ReplayModel.stream_chat

    async def recording(self, messages, tools, on_delta=None):
        if self.plan is not None:
            while len(turns) < self.plan.turn:
                turns.append({"ccm": [], "naive": None})
            turns[self.plan.turn - 1]["ccm"].append(messages)
        return await original(self, messages, tools, on_delta)

    ReplayModel.stream_chat = recording  # type: ignore[method-assign]
    spans = asyncio.run(choose_spans(parsed, None, None)).spans
    asyncio.run(replay(parsed, spans, Settings()))
    system = {"role": "system", "content": paths.prompt("system")}
    history: list[dict] = []
    for index, turn in enumerate(parsed.turns):
        user = {"role": "user", "content": clean_user_text(turn.user) or "(empty message)"}
        if index < len(turns):
            turns[index]["naive"] = [system, *history, user]
        reply = "\n\n".join(r.strip() for r in turn.agent_responses if r and r.strip()) or "(no response recorded)"
        history += [user, {"role": "assistant", "content": reply}]
    Path(args.output).write_text(json.dumps({"transcript": str(args.transcript), "turns": turns}), encoding="utf-8")
    print(f"{len(turns)} turns written to {args.output}")
    return 0


def chatml(messages: list[dict]) -> str:
    """A request as SmolLM2's ChatML prompt (tool calls and results as text, the same for both sides)."""
    out = []
    for m in messages:
        content = m.get("content") or ""
        if m.get("tool_calls"):
            content += "\n" + json.dumps(m["tool_calls"], ensure_ascii=False)
        out.append(f"<|im_start|>{m['role']}\n{content}<|im_end|>\n")
    return "".join(out) + "<|im_start|>assistant\n"


def measure(args: argparse.Namespace) -> int:
    """Evaluate both sides' requests with llama.cpp, each side keeping its KV cache (llama-cpp-python venv)."""
    from llama_cpp import Llama

    data = json.loads(Path(args.requests).read_text(encoding="utf-8"))
    sides = {name: Llama(model_path=args.model, n_ctx=args.n_ctx, verbose=False) for name in ("ccm", "naive")}
    previous: dict[str, list[int]] = {"ccm": [], "naive": []}
    totals = {name: {"tokens": 0, "evaluated": 0, "seconds": 0.0} for name in sides}
    print(f"{'turn':>4}  {'ccm sent':>8}  {'ccm eval':>8}  {'naive sent':>10}  {'naive eval':>10}")
    for number, turn in enumerate(data["turns"], 1):
        row: dict[str, tuple[int, int]] = {}
        requests = {"ccm": turn["ccm"], "naive": [turn["naive"]] if turn["naive"] else []}
        if any(
            len(sides[n].tokenize(chatml(r).encode(), special=True)) >= args.n_ctx - 8
            for n in requests
            for r in requests[n]
        ):
            print(f"{number:>4}  (over the {args.n_ctx}-token context: stopped)")
            break
        for name, reqs in requests.items():
            llm = sides[name]
            sent = evaluated = 0
            for messages in reqs:
                tokens = llm.tokenize(chatml(messages).encode(), special=True)
                shared = 0
                for a, b in zip(previous[name], tokens):
                    if a != b:
                        break
                    shared += 1
                started = time.perf_counter()
                llm.create_completion(prompt=tokens, max_tokens=1, temperature=0.0)
                totals[name]["seconds"] += time.perf_counter() - started
                previous[name] = tokens
                sent += len(tokens)
                evaluated += len(tokens) - shared
            totals[name]["tokens"] += sent
            totals[name]["evaluated"] += evaluated
            row[name] = (sent, evaluated)
        print(f"{number:>4}  {row['ccm'][0]:>8,}  {row['ccm'][1]:>8,}  {row['naive'][0]:>10,}  {row['naive'][1]:>10,}")
    c, n = totals["ccm"], totals["naive"]
    print(
        f"\nsent: ccm {c['tokens']:,} vs naive {n['tokens']:,} tokens ({c['tokens'] / max(1, n['tokens']):.2f}×)\n"
        f"re-evaluated: ccm {c['evaluated']:,} vs naive {n['evaluated']:,} tokens "
        f"({c['evaluated'] / max(1, n['evaluated']):.2f}×)\n"
        f"prompt time: ccm {c['seconds']:.1f} s vs naive {n['seconds']:.1f} s ({c['seconds'] / max(1e-9, n['seconds']):.2f}×)"
    )
    return 0


def _chat_messages(messages: list[dict]) -> list[dict]:
    """A request's messages as the server's chat endpoint takes them: role and text (tool calls as text)."""
    out = []
    for m in messages:
        content = m.get("content") or ""
        if not isinstance(content, str):
            content = json.dumps(content, ensure_ascii=False)
        if m.get("tool_calls"):
            content += "\n" + json.dumps(m["tool_calls"], ensure_ascii=False)
        out.append({"role": m["role"], "content": content})
        if m["role"] == "tool":
            out[-1]["tool_call_id"] = m.get("tool_call_id") or "call"
    return out


_EVAL = re.compile(r"prompt eval time =\s*[\d.]+ ms /\s*(\d+) tokens")


class _Server:
    """``python -m llama_cpp.server`` on ``port``, its log in a file (read for the prompt-eval counts)."""

    def __init__(self, model: str, port: int, n_ctx: int, log: Path) -> None:
        self.url = f"http://127.0.0.1:{port}"
        self.log_path = log
        self.log = log.open("w", encoding="utf-8")
        command = [sys.executable, "-m", "llama_cpp.server", "--model", model, "--port", str(port)]
        command += ["--host", "127.0.0.1", "--n_ctx", str(n_ctx), "--verbose", "True"]
        command += ["--n_threads", "1", "--n_threads_batch", "1"]  # a shared machine: no thread spinning
        self.process = subprocess.Popen(command, stdout=self.log, stderr=subprocess.STDOUT)
        self.seen = 0
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(self.url + "/v1/models", timeout=2).read()
                return
            except OSError:
                if self.process.poll() is not None:
                    raise RuntimeError(f"the server exited: see {log}") from None
                time.sleep(0.5)
        raise RuntimeError(f"the server did not start in 120 s: see {log}")

    def ask(self, messages: list[dict]) -> tuple[int, int | None, float]:
        """(prompt tokens, tokens evaluated as the server's log says, seconds) of one request."""
        body = json.dumps({"messages": _chat_messages(messages), "max_tokens": 1, "temperature": 0.0}).encode()
        request = urllib.request.Request(
            self.url + "/v1/chat/completions", data=body, headers={"Content-Type": "application/json"}
        )
        started = time.perf_counter()
        with urllib.request.urlopen(request, timeout=3600) as response:
            answer = json.loads(response.read())
        seconds = time.perf_counter() - started
        evaluated = None
        for _ in range(50):  # the log line is written as the reply goes out: wait for it briefly
            self.log.flush()
            counts = _EVAL.findall(self.log_path.read_text(encoding="utf-8", errors="replace"))
            if len(counts) > self.seen:
                evaluated = int(counts[self.seen])
                self.seen = len(counts)
                break
            time.sleep(0.1)
        return int(answer["usage"]["prompt_tokens"]), evaluated, seconds

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.log.close()


def serve(args: argparse.Namespace) -> int:
    """Send both sides' requests to llama.cpp's OpenAI-compatible server, a fresh server per side."""
    data = json.loads(Path(args.requests).read_text(encoding="utf-8"))
    turns = data["turns"][: args.turns] if args.turns else data["turns"]
    rows: dict[str, list[tuple[int, int, float]]] = {}
    for name in args.sides.split(","):
        server = _Server(args.model, args.port, args.n_ctx, Path(args.log_dir) / f"llama-server-{name}.log")
        rows[name] = []
        try:
            for turn in turns:
                requests = turn["ccm"] if name == "ccm" else [turn["naive"]] if turn["naive"] else []
                sent = evaluated = 0
                seconds = 0.0
                try:
                    for messages in requests:
                        prompt, count, took = server.ask(messages)
                        sent += prompt
                        evaluated += count if count is not None else prompt
                        seconds += took
                except urllib.error.HTTPError as exc:  # past the context window: this side stops here
                    print(f"{name}: turn {len(rows[name]) + 1} refused ({exc.code}): stopped", file=sys.stderr)
                    break
                rows[name].append((sent, evaluated, seconds))
                print(
                    f"{name} turn {len(rows[name])}: {sent:,} sent, {evaluated:,} evaluated, {seconds:.1f} s",
                    file=sys.stderr,
                )
        finally:
            server.stop()
    if len(rows) < 2:  # one side only (run the other elsewhere, on another port): its per-turn lines above
        return 0
    common = min(len(rows["ccm"]), len(rows["naive"]))
    print(f"llama.cpp server ({Path(args.model).name}), {common} turns of {data['transcript']}\n")
    print("| turn | ccm sent | ccm re-evaluated | ccm s | naive sent | naive re-evaluated | naive s |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    totals = {name: [0, 0, 0.0] for name in rows}
    for index in range(common):
        cells = []
        for name in ("ccm", "naive"):
            sent, evaluated, seconds = rows[name][index]
            totals[name][0] += sent
            totals[name][1] += evaluated
            totals[name][2] += seconds
            cells += [f"{sent:,}", f"{evaluated:,}", f"{seconds:.1f}"]
        print(f"| {index + 1} | " + " | ".join(cells) + " |")
    c, n = totals["ccm"], totals["naive"]
    print(
        f"\nsent: ccm {c[0]:,} vs naive {n[0]:,} tokens ({c[0] / max(1, n[0]):.2f}×)\n"
        f"re-evaluated (the server's prompt-eval count): ccm {c[1]:,} vs naive {n[1]:,} tokens "
        f"({c[1] / max(1, n[1]):.2f}×)\n"
        f"wall time: ccm {c[2]:.1f} s vs naive {n[2]:.1f} s ({c[2] / max(1e-9, n[2]):.2f}×)"
    )
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="step", required=True)
    d = sub.add_parser("dump")
    d.add_argument("--transcript", type=Path, default=DEFAULT)
    d.add_argument("--turns", type=int, default=12)
    d.add_argument("--budget", type=int, default=4000)
    d.add_argument("-o", "--output", default="prefix-cache-requests.json")
    m = sub.add_parser("measure")
    m.add_argument("requests")
    m.add_argument("--model", required=True)
    m.add_argument("--n-ctx", type=int, default=8192)
    v = sub.add_parser("server")
    v.add_argument("requests")
    v.add_argument("--model", required=True)
    v.add_argument("--n-ctx", type=int, default=8192)
    v.add_argument("--port", type=int, default=8089)
    v.add_argument("--turns", type=int, default=0, help="only the first N turns of the file")
    v.add_argument("--log-dir", default=".", help="where the servers' logs go")
    v.add_argument("--sides", default="ccm,naive", help="ccm, naive or both (one after the other)")
    args = ap.parse_args()
    return {"dump": dump, "measure": measure, "server": serve}[args.step](args)


if __name__ == "__main__":
    sys.exit(main())
